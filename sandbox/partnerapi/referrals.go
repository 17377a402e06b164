package partnerapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// MaxBodyBytes bounds every JSON request body (413 beyond).
const MaxBodyBytes = 1 << 20

// referralsPage is the body of GET /api/v1/referrals/.
type referralsPage struct {
	Referrals  []referrals.Referral `json:"referrals"`
	NextCursor *string              `json:"nextCursor"`
}

// CreateReferral stores a trial referral. It returns what was submitted
// (submissionOf), "" when the body was refused before that was known.
func (a *API) CreateReferral(w http.ResponseWriter, r *http.Request, caller idp.Principal) (submission string) {
	if op := a.contract.takes(contractdoc.CreateReferral); op != nil {
		return a.createReferralByContract(w, r, caller, op)
	}
	req, trialID, now, ok := readSubmission(a, w, r, caller.ClientID, validateReferral)
	if !ok {
		return ""
	}
	ref := referrals.Referral{
		TrialID:     trialID,
		OutcomesID:  uuid.NewString(),
		ClientID:    caller.ClientID,
		Status:      referrals.StatusReceived,
		SubmittedAt: now.UTC().Format(referrals.TimestampLayout),
		Patient:     req.Patient,
		Notes:       req.Notes,
	}
	submission = submissionOf(trialID, req.Patient)
	if err := a.backend.Records.CreateReferral(request.StoreContext(r), ref); err != nil {
		a.reply.Fail(w, r, err)
		return submission
	}
	w.Header().Set("Location", referralPath(ref))
	a.writeReferral(w, r, http.StatusCreated, contractdoc.CreateReferral, ref)
	return submission
}

// ListReferrals answers GET /api/v1/referrals/: the caller's trial
// referrals, newest first, a page at a time.
func (a *API) ListReferrals(w http.ResponseWriter, r *http.Request, caller idp.Principal) {
	page, err := request.Page(r)
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	// The stored JSON is the built-in shape: a contract's shape is rendered.
	if l, ok := a.backend.Records.(referralsJSONLister); ok && !a.contract.shapes(referralKind) {
		a.writeReferralsPage(w, r, l, caller.ClientID, page)
		return
	}
	items, next, err := a.backend.Records.ListReferrals(request.StoreContext(r), caller.ClientID, page)
	if err != nil {
		a.reply.Fail(w, r, request.ListError(err))
		return
	}
	if a.contract.shapes(referralKind) {
		writePage(a, w, r, referralKind, items, next, renderReferral)
		return
	}
	if items == nil {
		items = []referrals.Referral{}
	}
	reply.JSON(w, http.StatusOK, referralsPage{Referrals: items, NextCursor: request.NextCursor(next)})
}

// GetReferral answers 404 alike for an unknown id, another partner's
// referral and a trial id that is not the referral's: never revealing that
// a record exists.
func (a *API) GetReferral(w http.ResponseWriter, r *http.Request, caller idp.Principal) {
	vars := request.PathVars(r)
	ref, err := a.backend.Records.GetReferral(request.StoreContext(r), caller.ClientID, vars["outcomes_id"])
	if err == nil && !a.trialNamed(vars["trial_id"], ref.TrialID) {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, "no referral with that trial id and outcomes id"))
		return
	}
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	a.writeReferral(w, r, http.StatusOK, contractdoc.GetReferral, ref)
}

// trialNamed reports whether id (a trialId or altTrialId) names the trial
// whose canonical id is canonical.
func (a *API) trialNamed(id, canonical string) bool {
	for _, t := range a.trials {
		if t.TrialID == canonical && t.Matches(id) {
			return true
		}
	}
	return false
}

// readSubmission decodes and validates a submitted record against the
// sandbox clock and trials, naming unknown fields in Sandbox-Warning. When
// the body is refused it answers the problem itself and ok is false.
func readSubmission[T any](a *API, w http.ResponseWriter, r *http.Request, clientID string,
	validate func(T, time.Time, []referrals.Trial) (string, []reply.FieldError)) (req T, trialID string, now time.Time, ok bool) {
	unknown, invalid, err := DecodeSubmission(r, MaxBodyBytes, &req)
	if err != nil {
		a.reply.Fail(w, r, err)
		return req, "", now, false
	}
	reply.WarnUnknownFields(w, unknown)
	now = a.clocks.Now(clientID)
	trialID, errs := validate(req, now, a.trials)
	if errs = append(invalid, withoutFields(errs, invalid)...); len(errs) > 0 {
		a.reply.Problem(w, r, reply.Validation(errs))
		return req, "", now, false
	}
	return req, trialID, now, true
}

func referralPath(ref referrals.Referral) string {
	return "/api/v1/referrals/" + url.PathEscape(ref.TrialID) + "/" + url.PathEscape(ref.OutcomesID)
}

// referralsJSONLister is a store that lists referrals already encoded as
// the API writes them (the embedded store): a page is then written without
// decoding and encoding every record again.
type referralsJSONLister interface {
	AppendReferralsJSON(ctx context.Context, b []byte, clientID string, page store.Page) ([]byte, string, error)
}

// writeReferralsPage writes what writeJSON writes for a referralsPage of
// the page's records, byte for byte, by appending the records' stored
// encodings into one buffer: a page of 50 is about 18 KB, copied once.
func (a *API) writeReferralsPage(w http.ResponseWriter, r *http.Request, l referralsJSONLister, clientID string, page store.Page) {
	buf := a.pageBuffer()
	defer a.releasePageBuffer(buf)
	b := append((*buf)[:0], `{"referrals":[`...)
	b, next, err := l.AppendReferralsJSON(r.Context(), b, clientID, page)
	if err != nil {
		a.reply.Fail(w, r, request.ListError(err))
		return
	}
	b = append(b, `],"nextCursor":`...)
	if next == "" {
		b = append(b, "null"...)
	} else {
		cursor, _ := json.Marshal(next) // a string cannot fail
		b = append(b, cursor...)
	}
	b = append(b, "}\n"...)
	*buf = b
	reply.JSONBytes(w, http.StatusOK, b)
}
