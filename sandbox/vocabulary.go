package sandbox

import (
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/failures"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/partnerapi"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// The sandbox's error vocabulary, named here for the callers of package
// sandbox; package reply defines and writes it.
type (
	// Problem is an RFC 9457 problem details body.
	Problem = reply.Problem
	// FieldError is one invalid field of a request body.
	FieldError = reply.FieldError
)

// ProblemContentType is the media type of every error body (RFC 9457).
const ProblemContentType = reply.ContentType

// WarningHeader is the response header naming ignored request fields.
const WarningHeader = reply.WarningHeader

// Problem types, one per status code the sandbox answers with an error
// (see package reply).
const (
	ProblemTypeBadRequest           = reply.TypeBadRequest
	ProblemTypeValidationFailed     = reply.TypeValidationFailed
	ProblemTypeNotFound             = reply.TypeNotFound
	ProblemTypeMethodNotAllowed     = reply.TypeMethodNotAllowed
	ProblemTypeConflict             = reply.TypeConflict
	ProblemTypePayloadTooLarge      = reply.TypePayloadTooLarge
	ProblemTypeUnsupportedMediaType = reply.TypeUnsupportedMediaType
	ProblemTypeUnauthorized         = reply.TypeUnauthorized
	ProblemTypeForbidden            = reply.TypeForbidden
	ProblemTypeRateLimited          = reply.TypeRateLimited
	ProblemTypeInternalError        = reply.TypeInternalError
	ProblemTypeUnavailable          = reply.TypeUnavailable
	ProblemTypeQuotaExceeded        = reply.TypeQuotaExceeded
)

// Per-request switches a client (or QA) sends to force a failure on one
// request only, and the header naming the rule that forced an answer
// (package failures).
const (
	ForceStatusHeader = failures.ForceStatusHeader
	DelayHeader       = failures.DelayHeader
	ScenarioHeader    = failures.ScenarioHeader
	RuleHeader        = failures.RuleHeader
)

// DefaultMaxHeld and DefaultMaxHeldPerClient cap the requests delays and
// hangs hold open (package failures).
const (
	DefaultMaxHeld          = failures.DefaultMaxHeld
	DefaultMaxHeldPerClient = failures.DefaultMaxHeldPerClient
)

// Roles (app permissions) the partner API checks, as clients.json grants
// them (package partnerapi).
const (
	RoleTrialsRead              = partnerapi.RoleTrialsRead
	RoleReferralsRead           = partnerapi.RoleReferralsRead
	RoleReferralsWrite          = partnerapi.RoleReferralsWrite
	RoleQualifiedReferralsRead  = partnerapi.RoleQualifiedReferralsRead
	RoleQualifiedReferralsWrite = partnerapi.RoleQualifiedReferralsWrite
)

// Genders are the values the API accepts for patient.gender.
func Genders() []string { return partnerapi.Genders() }
