package sandbox

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

// maxBodyBytes bounds every JSON request body (413 beyond).
const maxBodyBytes = 1 << 20

// referralsPage is the body of GET /api/v1/referrals/.
type referralsPage struct {
	Referrals  []referrals.Referral `json:"referrals"`
	NextCursor *string              `json:"nextCursor"`
}

// createReferral stores a trial referral. It returns what was submitted
// (submissionOf), "" when the body was refused before that was known.
func (s *Server) createReferral(w http.ResponseWriter, r *http.Request, caller idp.Principal) (submission string) {
	if op := s.contract.takes(contractdoc.CreateReferral); op != nil {
		return s.createReferralByContract(w, r, caller, op)
	}
	req, trialID, now, ok := readSubmission(s, w, r, caller.ClientID, validateReferral)
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
	if err := s.backend.Records.CreateReferral(request.StoreContext(r), ref); err != nil {
		s.reply.Fail(w, r, err)
		return submission
	}
	w.Header().Set("Location", referralPath(ref))
	s.writeReferral(w, r, http.StatusCreated, contractdoc.CreateReferral, ref)
	return submission
}

func (s *Server) listReferrals(w http.ResponseWriter, r *http.Request, caller idp.Principal) {
	page, err := request.Page(r)
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	// The stored JSON is the built-in shape: a contract's shape is rendered.
	if l, ok := s.backend.Records.(referralsJSONLister); ok && !s.contract.shapes(referralKind) {
		s.writeReferralsPage(w, r, l, caller.ClientID, page)
		return
	}
	items, next, err := s.backend.Records.ListReferrals(request.StoreContext(r), caller.ClientID, page)
	if err != nil {
		s.reply.Fail(w, r, request.ListError(err))
		return
	}
	if s.contract.shapes(referralKind) {
		writePage(s, w, r, referralKind, items, next, renderReferral)
		return
	}
	if items == nil {
		items = []referrals.Referral{}
	}
	reply.JSON(w, http.StatusOK, referralsPage{Referrals: items, NextCursor: request.NextCursor(next)})
}

// getReferral answers 404 alike for an unknown id, another partner's
// referral and a trial id that is not the referral's: never revealing that
// a record exists.
func (s *Server) getReferral(w http.ResponseWriter, r *http.Request, caller idp.Principal) {
	vars := request.PathVars(r)
	ref, err := s.backend.Records.GetReferral(request.StoreContext(r), caller.ClientID, vars["outcomes_id"])
	if err == nil && !s.trialNamed(vars["trial_id"], ref.TrialID) {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		s.reply.Problem(w, r, reply.New(http.StatusNotFound, "no referral with that trial id and outcomes id"))
		return
	}
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	s.writeReferral(w, r, http.StatusOK, contractdoc.GetReferral, ref)
}

// trialNamed reports whether id (a trialId or altTrialId) names the trial
// whose canonical id is canonical.
func (s *Server) trialNamed(id, canonical string) bool {
	for _, t := range s.trials {
		if t.TrialID == canonical && t.Matches(id) {
			return true
		}
	}
	return false
}

// readSubmission decodes and validates a submitted record against the
// sandbox clock and trials, naming unknown fields in Sandbox-Warning. When
// the body is refused it answers the problem itself and ok is false.
func readSubmission[T any](s *Server, w http.ResponseWriter, r *http.Request, clientID string,
	validate func(T, time.Time, []referrals.Trial) (string, []FieldError)) (req T, trialID string, now time.Time, ok bool) {
	unknown, invalid, err := decodeSubmission(r, maxBodyBytes, &req)
	if err != nil {
		s.reply.Fail(w, r, err)
		return req, "", now, false
	}
	reply.WarnUnknownFields(w, unknown)
	now = s.clocks.Now(clientID)
	trialID, errs := validate(req, now, s.trials)
	if errs = append(invalid, withoutFields(errs, invalid)...); len(errs) > 0 {
		s.reply.Problem(w, r, reply.Validation(errs))
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
func (s *Server) writeReferralsPage(w http.ResponseWriter, r *http.Request, l referralsJSONLister, clientID string, page store.Page) {
	buf := s.pageBuffer()
	defer s.releasePageBuffer(buf)
	b := append((*buf)[:0], `{"referrals":[`...)
	b, next, err := l.AppendReferralsJSON(r.Context(), b, clientID, page)
	if err != nil {
		s.reply.Fail(w, r, request.ListError(err))
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
