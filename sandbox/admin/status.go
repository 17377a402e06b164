package admin

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/lifecycle"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// statusMove is the body of the admin status endpoints. clientId is needed
// for a qualified referral only when several partners used the same
// externalSourceId.
type statusMove struct {
	Status   string `json:"status"`
	ClientID string `json:"clientId"`
}

func (a *API) readStatusMove(w http.ResponseWriter, r *http.Request) (statusMove, bool) {
	var m statusMove
	if err := a.decodeAdminBody(r, &m); err != nil {
		a.reply.Fail(w, r, err)
		return m, false
	}
	if !referrals.ValidStatus(m.Status) {
		a.reply.Problem(w, r, reply.Validation([]reply.FieldError{{Field: "status", Message: "must be one of " + strings.Join(referrals.Statuses(), ", ")}}))
		return m, false
	}
	return m, true
}

func (a *API) moveReferralStatus(w http.ResponseWriter, r *http.Request) {
	m, ok := a.readStatusMove(w, r)
	if !ok {
		return
	}
	vars := request.PathVars(r)
	found, err := a.backend.Records.FindReferral(request.StoreContext(r), vars["outcomes_id"])
	if err == nil && !a.trialNamed(vars["trial_id"], found.TrialID) {
		err = store.ErrNotFound
	}
	if err == nil {
		found, err = a.backend.Records.UpdateReferral(request.StoreContext(r), found.ClientID, found.OutcomesID, func(ref *referrals.Referral) error {
			if !referrals.CanMove(ref.Status, m.Status) {
				return lifecycle.BadTransition{From: ref.Status, To: m.Status}
			}
			ref.Status = m.Status
			return nil
		})
	}
	if a.statusMoveFailed(w, r, err, "referral") {
		return
	}
	answer, err := a.adminReferral(found)
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	reply.JSON(w, http.StatusOK, answer)
}

func (a *API) moveQualifiedStatus(w http.ResponseWriter, r *http.Request) {
	m, ok := a.readStatusMove(w, r)
	if !ok {
		return
	}
	id := request.PathVars(r)["external_source_id"]
	owner, err := a.qualifiedOwner(request.StoreContext(r), id, m.ClientID)
	var updated referrals.QualifiedReferral
	if err == nil {
		updated, err = a.backend.Records.UpdateQualified(request.StoreContext(r), owner, id, func(q *referrals.QualifiedReferral) error {
			return lifecycle.ChangeStatus(q, lifecycle.Change{
				To: m.Status, At: a.clocks.Now(owner), Actor: "sandbox-admin", RequestID: reply.RequestID(r),
			})
		})
	}
	if a.statusMoveFailed(w, r, err, "qualified referral") {
		return
	}
	answer, err := a.adminQualified(updated)
	if err != nil {
		a.reply.Fail(w, r, err)
		return
	}
	reply.JSON(w, http.StatusOK, answer)
}

// trialNamed reports whether id (a trialId or altTrialId) names the trial
// whose canonical id is canonical.
func (a *API) trialNamed(id, canonical string) bool {
	for _, t := range a.cfg.Trials {
		if t.TrialID == canonical && t.Matches(id) {
			return true
		}
	}
	return false
}

// qualifiedOwner finds which partner holds externalSourceId, or checks the
// one given.
func (a *API) qualifiedOwner(ctx context.Context, id, clientID string) (string, error) {
	if clientID != "" {
		return clientID, nil
	}
	clients, err := a.backend.Records.Clients(ctx)
	if err != nil {
		return "", err
	}
	var owners []string
	for _, c := range clients {
		if _, err := a.backend.Records.GetQualified(ctx, c, id, nil); err == nil {
			owners = append(owners, c)
		}
	}
	switch len(owners) {
	case 0:
		return "", store.ErrNotFound
	case 1:
		return owners[0], nil
	}
	return "", reply.NewRequestError(http.StatusConflict, "several partners use this externalSourceId ("+strings.Join(owners, ", ")+"); name one as clientId")
}

// statusMoveFailed answers a failed status move and reports whether it did.
func (a *API) statusMoveFailed(w http.ResponseWriter, r *http.Request, err error, kind string) bool {
	var bad lifecycle.BadTransition
	switch {
	case err == nil:
		return false
	case errors.Is(err, store.ErrNotFound):
		a.reply.Problem(w, r, reply.New(http.StatusNotFound, "no "+kind+" with that id"))
	case errors.As(err, &bad):
		a.reply.Problem(w, r, reply.New(http.StatusConflict, bad.Error()))
	default:
		a.reply.Fail(w, r, err)
	}
	return true
}
