package partnerapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/strictjson"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
)

// readContractSubmission reads a submission to an operation a contract took
// over: the body checks every submission gets (media type, size, one JSON
// object), then the contract's request schema, then the sandbox's own rules
// on the members it files records under. It answers refusals itself; ok is
// false then. Failing fields are named by JSON Pointer.
func (a *API) readContractSubmission(w http.ResponseWriter, r *http.Request, clientID string, op *contractdoc.Op) (contractSubmission, bool) {
	var (
		raw     json.RawMessage
		members map[contractdoc.Member]string
		now     time.Time
	)
	if err := checkJSONContentType(r.Header.Get("Content-Type")); err != nil {
		a.reply.Fail(w, r, err)
		return contractSubmission{}, false
	}
	body, err := readBody(r, MaxBodyBytes)
	if err == nil {
		raw, err = singleObject(body)
	}
	if err != nil {
		a.reply.Fail(w, r, err)
		return contractSubmission{}, false
	}
	// A repeated member would be stored as sent, both values, and read
	// back by each client's decoder its own way: refuse it, as the
	// built-in shapes do.
	if dup, found := strictjson.FindDuplicate(raw); found {
		a.reply.Fail(w, r, duplicateError(dup, dup.Pointer))
		return contractSubmission{}, false
	}
	// Numbers as written, so that the contract's int64 and float formats
	// are checked exactly.
	var value map[string]any
	if err := decodeNumbers(raw, &value); err != nil {
		a.reply.Fail(w, r, reply.NewRequestError(http.StatusBadRequest, "the request body could not be decoded: "+err.Error()))
		return contractSubmission{}, false
	}
	content, more := contractContentErrors(raw)
	e := fieldErrors(content)
	failed := map[string]bool{}
	for _, fe := range e {
		failed[fe.Field] = true
	}
	byContract, moreByContract := op.Check(value)
	more = more || moreByContract
	for _, fe := range byContract {
		if failed[fe.Pointer] {
			continue // its content error says it already
		}
		e.add(fe.Pointer, "%s", fe.Message)
		failed[fe.Pointer] = true
	}
	now = a.clocks.Now(clientID)
	members = map[contractdoc.Member]string{}
	for m, name := range op.RequestMembers {
		at := "/" + jsonPointerToken(name)
		v, present := value[name].(string)
		switch {
		case failed[at]:
		case m == contractdoc.TrialID && present && v != "":
			members[m] = e.trial(at, v, a.trials)
		case m == contractdoc.ExternalSourceID && present && externalSourceIDRE().MatchString(v):
			members[m] = v
		case m == contractdoc.ExternalSourceID && present:
			e.add(at, "must be 1 to %d of letters, digits, '.', '_', ':' and '-', and not '.' or '..': it is the record's URL path segment", MaxExternalSourceIDLength)
		case m == contractdoc.TrialID && op.Operation == contractdoc.CreateQualified && !present:
		default:
			e.add(at, "required: the sandbox files the record under it")
		}
	}
	if len(e) > 0 {
		p := reply.Validation(e)
		if more {
			// The check stopped at its cap: more fields may fail.
			p.Detail = fmt.Sprintf("at least %d field(s) failed validation; see errors", len(e))
		}
		a.reply.Problem(w, r, p)
		return contractSubmission{}, false
	}
	return contractSubmission{raw: raw, members: members, now: now, digest: contractSubmissionOf(members[contractdoc.TrialID], value, op)}, true
}

// contractSubmission is a submission a contract's operation accepted.
type contractSubmission struct {
	raw     json.RawMessage
	members map[contractdoc.Member]string
	// now is the submitting client's time, the record's submittedAt.
	now time.Time
	// digest identifies what was submitted, for the journal
	// (contractSubmissionOf).
	digest string
}

// decodeNumbers decodes JSON keeping each number as json.Number.
func decodeNumbers(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// jsonPointerToken escapes a member name as a JSON Pointer token.
func jsonPointerToken(s string) string {
	out := make([]byte, 0, len(s))
	for i := range len(s) {
		switch s[i] {
		case '~':
			out = append(out, "~0"...)
		case '/':
			out = append(out, "~1"...)
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

// createReferralByContract is CreateReferral for a contract's shapes.
func (a *API) createReferralByContract(w http.ResponseWriter, r *http.Request, caller idp.Principal, op *contractdoc.Op) (submission string) {
	sub, ok := a.readContractSubmission(w, r, caller.ClientID, op)
	if !ok {
		return ""
	}
	raw, members, now := sub.raw, sub.members, sub.now
	ref := referrals.Referral{
		TrialID:     members[contractdoc.TrialID],
		OutcomesID:  uuid.NewString(),
		ClientID:    caller.ClientID,
		Status:      referrals.StatusReceived,
		SubmittedAt: now.UTC().Format(referrals.TimestampLayout),
		Submission:  raw,
	}
	if err := a.backend.Records.CreateReferral(request.StoreContext(r), ref); err != nil {
		a.reply.Fail(w, r, err)
		return sub.digest
	}
	w.Header().Set("Location", referralPath(ref))
	a.writeReferral(w, r, http.StatusCreated, contractdoc.CreateReferral, ref)
	return sub.digest
}

// createQualifiedByContract is CreateQualified for a contract's shapes.
func (a *API) createQualifiedByContract(w http.ResponseWriter, r *http.Request, caller idp.Principal, op *contractdoc.Op) (submission string) {
	sub, ok := a.readContractSubmission(w, r, caller.ClientID, op)
	if !ok {
		return ""
	}
	raw, members, now := sub.raw, sub.members, sub.now
	at := now.UTC().Format(referrals.TimestampLayout)
	q := referrals.QualifiedReferral{
		ExternalSourceID: members[contractdoc.ExternalSourceID],
		TrialID:          members[contractdoc.TrialID],
		ClientID:         caller.ClientID,
		Status:           referrals.StatusReceived,
		SubmittedAt:      at,
		AuditTrail: []referrals.AuditEntry{{
			At: at, Action: referrals.AuditSubmitted, Actor: caller.ClientID, RequestID: reply.RequestID(r),
		}},
		AuditTrailTotal: 1,
		Submission:      raw,
	}
	a.storeQualified(w, r, q)
	return sub.digest
}
