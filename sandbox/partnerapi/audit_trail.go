package partnerapi

import (
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// auditTrailPage is the body of GET
// /api/v1/referrals/qualified/{external_source_id}/audit-trail.
type auditTrailPage struct {
	AuditTrail []referrals.AuditEntry `json:"auditTrail"`
	NextCursor *string                `json:"nextCursor"`
}

// QualifiedAuditTrail pages through the whole audit trail of one of the
// caller's qualified referrals, oldest first. A record carries only its
// newest store.TrailInRecord entries; this is how the rest are read.
// Reading the trail is not itself recorded in it: it shows no patient data,
// and recording it would make the trail grow while being paged.
func (a *API) QualifiedAuditTrail(w http.ResponseWriter, r *http.Request, caller idp.Principal) {
	page, err := request.Page(r)
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	trail, next, err := a.backend.Records.QualifiedAuditTrail(request.StoreContext(r), caller.ClientID, mux.Vars(r)["external_source_id"], page)
	if errors.Is(err, store.ErrNotFound) {
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, "no qualified referral with that externalSourceId"))
		return
	}
	if err != nil {
		a.reply.Fail(w, r, request.ListError(err))
		return
	}
	if trail == nil {
		trail = []referrals.AuditEntry{}
	}
	reply.JSON(w, http.StatusOK, auditTrailPage{AuditTrail: trail, NextCursor: request.NextCursor(next)})
}
