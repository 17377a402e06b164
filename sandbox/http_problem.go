package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// ProblemContentType is the media type of every error body (RFC 9457).
const ProblemContentType = "application/problem+json"

// problemTypePrefix starts every problem type URN. URNs rather than URLs
// because the sandbox has no documentation host the types could point at, and
// RFC 9457 only requires a URI.
const problemTypePrefix = "urn:referrals-sandbox:problem:"

// Problem types, one per status code the sandbox answers with an error.
const (
	// ProblemTypeBadRequest: the body is not well-formed JSON or a value has
	// the wrong JSON type (400).
	ProblemTypeBadRequest = problemTypePrefix + "bad-request"
	// ProblemTypeValidationFailed: the body is well-formed but field values
	// break the rules; the errors member lists every field at fault (422).
	ProblemTypeValidationFailed = problemTypePrefix + "validation-failed"
	// ProblemTypeNotFound: no such resource (404).
	ProblemTypeNotFound = problemTypePrefix + "not-found"
	// ProblemTypeMethodNotAllowed: the path exists but not with this method (405).
	ProblemTypeMethodNotAllowed = problemTypePrefix + "method-not-allowed"
	// ProblemTypeConflict: the resource already exists (409).
	ProblemTypeConflict = problemTypePrefix + "conflict"
	// ProblemTypePayloadTooLarge: the body is over the size limit (413).
	ProblemTypePayloadTooLarge = problemTypePrefix + "payload-too-large"
	// ProblemTypeUnsupportedMediaType: the body is not declared as JSON (415).
	ProblemTypeUnsupportedMediaType = problemTypePrefix + "unsupported-media-type"
	// ProblemTypeUnauthorized: the access token is missing, invalid or expired (401).
	ProblemTypeUnauthorized = problemTypePrefix + "unauthorized"
	// ProblemTypeForbidden: the token is valid but lacks the permission (403).
	ProblemTypeForbidden = problemTypePrefix + "forbidden"
	// ProblemTypeRateLimited: too many requests (429).
	ProblemTypeRateLimited = problemTypePrefix + "rate-limited"
	// ProblemTypeInternalError: the sandbox failed (500).
	ProblemTypeInternalError = problemTypePrefix + "internal-error"
	// ProblemTypeUnavailable: the service is (simulated to be) unavailable (503).
	ProblemTypeUnavailable = problemTypePrefix + "unavailable"
	// ProblemTypeQuotaExceeded: the write would take the client beyond its
	// store quota (serve --quota-records, --quota-bytes); nothing was
	// stored (507). Sandbox-only: the real service documents no such
	// limit, and 507 is a status partners' retry policies do not retry.
	ProblemTypeQuotaExceeded = problemTypePrefix + "quota-exceeded"
)

// Problem is an RFC 9457 problem details body.
type Problem struct {
	// Type is one of the ProblemType* URNs.
	Type string `json:"type"`
	// Title is the standard text of Status.
	Title string `json:"title"`
	// Status repeats the HTTP status code.
	Status int `json:"status"`
	// Detail explains this occurrence in words meant for the developer.
	Detail string `json:"detail,omitempty"`
	// Instance is the request path the problem occurred on.
	Instance string `json:"instance,omitempty"`
	// TraceID is the request id, so a partner can quote it when reporting.
	TraceID string `json:"traceId,omitempty"`
	// Errors lists every invalid field; set for validation failures and
	// wrong JSON types.
	Errors []FieldError `json:"errors,omitempty"`
}

// FieldError is one invalid field of a request body.
type FieldError struct {
	// Field is the dotted path of the field, e.g. patient.dateOfBirth or
	// conditions[0].code.
	Field string `json:"field"`
	// Message says what is wrong, without repeating the field name.
	Message string `json:"message"`
}

// problemType returns the type URN of an HTTP status, or about:blank (which
// RFC 9457 defines as "nothing beyond the status code") for other statuses.
func problemType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return ProblemTypeBadRequest
	case http.StatusUnprocessableEntity:
		return ProblemTypeValidationFailed
	case http.StatusNotFound:
		return ProblemTypeNotFound
	case http.StatusMethodNotAllowed:
		return ProblemTypeMethodNotAllowed
	case http.StatusConflict:
		return ProblemTypeConflict
	case http.StatusRequestEntityTooLarge:
		return ProblemTypePayloadTooLarge
	case http.StatusUnsupportedMediaType:
		return ProblemTypeUnsupportedMediaType
	case http.StatusUnauthorized:
		return ProblemTypeUnauthorized
	case http.StatusForbidden:
		return ProblemTypeForbidden
	case http.StatusTooManyRequests:
		return ProblemTypeRateLimited
	case http.StatusInternalServerError:
		return ProblemTypeInternalError
	case http.StatusServiceUnavailable:
		return ProblemTypeUnavailable
	case http.StatusInsufficientStorage:
		return ProblemTypeQuotaExceeded
	default:
		return "about:blank"
	}
}

// newProblem returns the problem for status with its type and title filled
// in. The caller adds Instance and TraceID with forRequest.
func newProblem(status int, detail string) Problem {
	return Problem{
		Type:   problemType(status),
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
	}
}

// validationProblem returns the 422 problem listing every invalid field.
func validationProblem(errs []FieldError) Problem {
	p := newProblem(http.StatusUnprocessableEntity, fmt.Sprintf("%d field(s) failed validation; see errors", len(errs)))
	p.Errors = errs
	return p
}

// forRequest returns p with Instance set to the request's path and TraceID
// to the request id.
func (p Problem) forRequest(r *http.Request, traceID string) Problem {
	p.Instance = r.URL.EscapedPath()
	p.TraceID = traceID
	return p
}

// writeProblem writes p as an application/problem+json response. Missing
// status, type or title are filled in so a half-built problem still yields a
// well-formed body.
func writeProblem(w http.ResponseWriter, p Problem) {
	if p.Status == 0 {
		p.Status = http.StatusInternalServerError
	}
	if p.Type == "" {
		p.Type = problemType(p.Status)
	}
	if p.Title == "" {
		p.Title = http.StatusText(p.Status)
	}
	h := w.Header()
	h.Set("Content-Type", ProblemContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	// The status line is already sent; an encoding error here means the
	// client went away, and there is nobody left to tell.
	_ = json.NewEncoder(w).Encode(p)
}

// requestError is an error caused by the request (not by the sandbox),
// carrying the problem the handler should answer with.
type requestError struct {
	Problem Problem
}

// Error describes the problem in one line, for logs.
func (e *requestError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Problem.Status, e.Problem.Title, e.Problem.Detail)
}

// newRequestError returns a requestError for status with detail.
func newRequestError(status int, detail string) *requestError {
	return &requestError{Problem: newProblem(status, detail)}
}

// quotaDetail explains a 507: what filled up, that nothing changed, and
// how the room comes back. It names no figure of the client's usage, which
// the sandbox's log does not need either.
const quotaDetail = "this client's records and audit trails fill its store quota (serve --quota-records, --quota-bytes); " +
	"nothing was stored or changed, and reads that record a view are refused too. Resetting the client " +
	"(POST /__sandbox/reset with its clientId) frees the room"

// problemFor returns the problem to answer err with: the request's own
// problem for a requestError, otherwise a 500 that does not leak the
// internal error's text to the partner.
func problemFor(err error) Problem {
	var re *requestError
	if errors.As(err, &re) {
		return re.Problem
	}
	if errors.Is(err, store.ErrQuota) {
		return newProblem(http.StatusInsufficientStorage, quotaDetail)
	}
	if errors.Is(err, store.ErrCorrupt) {
		return newProblem(http.StatusInternalServerError, "this record is stored in a form the sandbox can no longer read (a damaged or hand-edited data file); the trace id identifies it in the sandbox log")
	}
	if errors.Is(err, journal.ErrCorrupt) {
		return newProblem(http.StatusInternalServerError, "the request journal holds an entry the sandbox cannot read (written under its keys by something else); clearing the journal (DELETE /__sandbox/requests) removes it")
	}
	return newProblem(http.StatusInternalServerError, "the sandbox failed to process the request; the trace id identifies it in the sandbox log")
}
