package sandbox

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// qualifiedPage is the body of GET /api/v1/referrals/qualified.
type qualifiedPage struct {
	QualifiedReferrals []referrals.QualifiedReferral `json:"qualifiedReferrals"`
	NextCursor         *string                       `json:"nextCursor"`
}

// createQualified stores a qualified referral. It returns what was
// submitted (submissionOf), "" when the body was refused before that was
// known.
func (s *Server) createQualified(w http.ResponseWriter, r *http.Request, caller idp.Principal) (submission string) {
	if op := s.contract.takes(contractdoc.CreateQualified); op != nil {
		return s.createQualifiedByContract(w, r, caller, op)
	}
	req, trialID, now, ok := readSubmission(s, w, r, caller.ClientID, validateQualifiedReferral)
	if !ok {
		return ""
	}
	at := now.UTC().Format(referrals.TimestampLayout)
	q := referrals.QualifiedReferral{
		ExternalSourceID: req.ExternalSourceID,
		TrialID:          trialID,
		ClientID:         caller.ClientID,
		Status:           referrals.StatusReceived,
		SubmittedAt:      at,
		Patient:          req.Patient,
		Address:          req.Address,
		Conditions:       req.Conditions,
		Medications:      req.Medications,
		Qualification:    req.Qualification,
		AuditTrail: []referrals.AuditEntry{{
			At: at, Action: referrals.AuditSubmitted, Actor: caller.ClientID, RequestID: reply.RequestID(r),
		}},
		AuditTrailTotal: 1,
	}
	s.storeQualified(w, r, q)
	return submissionOf(trialID, req.Patient)
}

func (s *Server) listQualified(w http.ResponseWriter, r *http.Request, caller idp.Principal) {
	page, err := request.Page(r)
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	items, next, err := s.backend.Records.ListQualified(request.StoreContext(r), caller.ClientID, page, s.viewedBy(r, caller))
	if err == nil {
		items, err = s.lifecycle.SettleAll(request.StoreContext(r), items, reply.RequestID(r))
	}
	if err != nil {
		s.reply.Fail(w, r, request.ListError(err))
		return
	}
	if s.contract.shapes(qualifiedKind) {
		writePage(s, w, r, qualifiedKind, items, next, renderQualified)
		return
	}
	if items == nil {
		items = []referrals.QualifiedReferral{}
	}
	reply.JSON(w, http.StatusOK, qualifiedPage{QualifiedReferrals: items, NextCursor: request.NextCursor(next)})
}

func (s *Server) getQualified(w http.ResponseWriter, r *http.Request, caller idp.Principal) {
	q, err := s.backend.Records.GetQualified(request.StoreContext(r), caller.ClientID, request.PathVars(r)["external_source_id"], s.viewedBy(r, caller))
	if err == nil {
		q, err = s.lifecycle.Settle(request.StoreContext(r), q, reply.RequestID(r))
	}
	if errors.Is(err, store.ErrNotFound) {
		s.reply.Problem(w, r, reply.New(http.StatusNotFound, "no qualified referral with that externalSourceId"))
		return
	}
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	s.writeQualified(w, r, http.StatusOK, contractdoc.GetQualified, q)
}

// viewedBy is the audit entry every read of a qualified referral appends:
// the audit trail records who saw the record, when, in which request.
func (s *Server) viewedBy(r *http.Request, caller idp.Principal) *referrals.AuditEntry {
	return &referrals.AuditEntry{
		At:        s.clocks.Now(caller.ClientID).UTC().Format(referrals.TimestampLayout),
		Action:    referrals.AuditViewed,
		Actor:     caller.ClientID,
		RequestID: reply.RequestID(r),
	}
}

func qualifiedPath(externalSourceID string) string {
	return "/api/v1/referrals/qualified/" + url.PathEscape(externalSourceID)
}

// storeQualified stores a new qualified referral and answers 201 with it
// and its Location, or 409 with the Location of the record a partner
// already submitted under the same externalSourceId (left unchanged).
func (s *Server) storeQualified(w http.ResponseWriter, r *http.Request, q referrals.QualifiedReferral) {
	if c, ok := s.backend.Records.(qualifiedJSONCreator); ok && !s.contract.shapes(qualifiedKind) {
		s.storeQualifiedJSON(w, r, c, q)
		return
	}
	err := s.backend.Records.CreateQualified(request.StoreContext(r), q)
	if errors.Is(err, store.ErrConflict) {
		s.qualifiedConflict(w, r, q.ExternalSourceID)
		return
	}
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	w.Header().Set("Location", qualifiedPath(q.ExternalSourceID))
	s.writeQualified(w, r, http.StatusCreated, contractdoc.CreateQualified, q)
}

// qualifiedJSONCreator is a store that answers a new qualified referral's
// JSON as it stores it (the embedded store): the record is encoded once,
// for the store and for the answer.
type qualifiedJSONCreator interface {
	CreateQualifiedJSON(ctx context.Context, b []byte, q referrals.QualifiedReferral) ([]byte, error)
}

// storeQualifiedJSON is storeQualified through a qualifiedJSONCreator: the
// same answers, the 201's body written as writeJSON would write the record
// the store returns.
func (s *Server) storeQualifiedJSON(w http.ResponseWriter, r *http.Request, c qualifiedJSONCreator, q referrals.QualifiedReferral) {
	buf := s.pageBuffer()
	defer s.releasePageBuffer(buf)
	b, err := c.CreateQualifiedJSON(request.StoreContext(r), (*buf)[:0], q)
	*buf = b
	switch {
	case errors.Is(err, store.ErrConflict):
		s.qualifiedConflict(w, r, q.ExternalSourceID)
	case err != nil:
		s.reply.Fail(w, r, err)
	default:
		*buf = append(b, '\n') // json.Encoder ends a value with one
		w.Header().Set("Location", qualifiedPath(q.ExternalSourceID))
		reply.JSONBytes(w, http.StatusCreated, *buf)
	}
}

// qualifiedConflict answers a resend: 409 with the Location of the record
// the partner already submitted under externalSourceID.
func (s *Server) qualifiedConflict(w http.ResponseWriter, r *http.Request, externalSourceID string) {
	w.Header().Set("Location", qualifiedPath(externalSourceID))
	s.reply.Problem(w, r, reply.New(http.StatusConflict,
		"a qualified referral with this externalSourceId was already submitted; it is at the Location header"))
}
