package partnerapi

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

// CreateQualified stores a qualified referral. It returns what was
// submitted (submissionOf), "" when the body was refused before that was
// known.
func (a *API) CreateQualified(w http.ResponseWriter, r *http.Request, caller idp.Principal) (submission string) {
	if op := a.contract.takes(contractdoc.CreateQualified); op != nil {
		return a.createQualifiedByContract(w, r, caller, op)
	}
	req, trialID, now, ok := readSubmission(a, w, r, caller.ClientID, validateQualifiedReferral)
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
	a.storeQualified(w, r, q)
	return submissionOf(trialID, req.Patient)
}

// ListQualified answers GET /api/v1/referrals/qualified: the caller's
// qualified referrals, newest first, a page at a time.
func (a *API) ListQualified(w http.ResponseWriter, r *http.Request, caller idp.Principal) {
	page, err := request.Page(r)
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	items, next, err := a.backend.Records.ListQualified(request.StoreContext(r), caller.ClientID, page, a.viewedBy(r, caller))
	if err == nil {
		items, err = a.lifecycle.SettleAll(request.StoreContext(r), items, reply.RequestID(r))
	}
	if err != nil {
		a.reply.Fail(w, r, request.ListError(err))
		return
	}
	if a.contract.shapes(qualifiedKind) {
		writePage(a, w, r, qualifiedKind, items, next, renderQualified)
		return
	}
	if items == nil {
		items = []referrals.QualifiedReferral{}
	}
	reply.JSON(w, http.StatusOK, qualifiedPage{QualifiedReferrals: items, NextCursor: request.NextCursor(next)})
}

// GetQualified answers GET /api/v1/referrals/qualified/{externalSourceId}:
// one of the caller's qualified referrals, its due moves applied.
func (a *API) GetQualified(w http.ResponseWriter, r *http.Request, caller idp.Principal) {
	q, err := a.backend.Records.GetQualified(request.StoreContext(r), caller.ClientID, request.PathVars(r)["external_source_id"], a.viewedBy(r, caller))
	if err == nil {
		q, err = a.lifecycle.Settle(request.StoreContext(r), q, reply.RequestID(r))
	}
	if errors.Is(err, store.ErrNotFound) {
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, "no qualified referral with that externalSourceId"))
		return
	}
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	a.writeQualified(w, r, http.StatusOK, contractdoc.GetQualified, q)
}

// viewedBy is the audit entry every read of a qualified referral appends:
// the audit trail records who saw the record, when, in which request.
func (a *API) viewedBy(r *http.Request, caller idp.Principal) *referrals.AuditEntry {
	return &referrals.AuditEntry{
		At:        a.clocks.Now(caller.ClientID).UTC().Format(referrals.TimestampLayout),
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
func (a *API) storeQualified(w http.ResponseWriter, r *http.Request, q referrals.QualifiedReferral) {
	if c, ok := a.backend.Records.(qualifiedJSONCreator); ok && !a.contract.shapes(qualifiedKind) {
		a.storeQualifiedJSON(w, r, c, q)
		return
	}
	err := a.backend.Records.CreateQualified(request.StoreContext(r), q)
	if errors.Is(err, store.ErrConflict) {
		a.qualifiedConflict(w, r, q.ExternalSourceID)
		return
	}
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	w.Header().Set("Location", qualifiedPath(q.ExternalSourceID))
	a.writeQualified(w, r, http.StatusCreated, contractdoc.CreateQualified, q)
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
func (a *API) storeQualifiedJSON(w http.ResponseWriter, r *http.Request, c qualifiedJSONCreator, q referrals.QualifiedReferral) {
	buf := a.pageBuffer()
	defer a.releasePageBuffer(buf)
	b, err := c.CreateQualifiedJSON(request.StoreContext(r), (*buf)[:0], q)
	*buf = b
	switch {
	case errors.Is(err, store.ErrConflict):
		a.qualifiedConflict(w, r, q.ExternalSourceID)
	case err != nil:
		a.reply.Fail(w, r, err)
	default:
		*buf = append(b, '\n') // json.Encoder ends a value with one
		w.Header().Set("Location", qualifiedPath(q.ExternalSourceID))
		reply.JSONBytes(w, http.StatusCreated, *buf)
	}
}

// qualifiedConflict answers a resend: 409 with the Location of the record
// the partner already submitted under externalSourceID.
func (a *API) qualifiedConflict(w http.ResponseWriter, r *http.Request, externalSourceID string) {
	w.Header().Set("Location", qualifiedPath(externalSourceID))
	a.reply.Problem(w, r, reply.New(http.StatusConflict,
		"a qualified referral with this externalSourceId was already submitted; it is at the Location header"))
}
