package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// statusMove is the body of the admin status endpoints. clientId is needed
// for a qualified referral only when several partners used the same
// externalSourceId.
type statusMove struct {
	Status   string `json:"status"`
	ClientID string `json:"clientId"`
}

// errBadTransition refuses a status change the processing order forbids.
type errBadTransition struct{ from, to string }

func (e errBadTransition) Error() string {
	next := referrals.NextStatuses(e.from)
	if len(next) == 0 {
		return fmt.Sprintf("status %s is final; it cannot move to %s", e.from, e.to)
	}
	return fmt.Sprintf("status %s can move to %s, not to %s", e.from, strings.Join(next, ", "), e.to)
}

func (s *Server) readStatusMove(w http.ResponseWriter, r *http.Request) (statusMove, bool) {
	var m statusMove
	if err := decodeAdminBody(r, &m); err != nil {
		s.reply.Fail(w, r, err)
		return m, false
	}
	if !referrals.ValidStatus(m.Status) {
		s.reply.Problem(w, r, reply.Validation([]FieldError{{Field: "status", Message: "must be one of " + strings.Join(referrals.Statuses(), ", ")}}))
		return m, false
	}
	return m, true
}

func (s *Server) moveReferralStatus(w http.ResponseWriter, r *http.Request) {
	m, ok := s.readStatusMove(w, r)
	if !ok {
		return
	}
	vars := pathVars(r)
	found, err := s.backend.Records.FindReferral(storeContext(r), vars["outcomes_id"])
	if err == nil && !s.trialNamed(vars["trial_id"], found.TrialID) {
		err = store.ErrNotFound
	}
	if err == nil {
		found, err = s.backend.Records.UpdateReferral(storeContext(r), found.ClientID, found.OutcomesID, func(ref *referrals.Referral) error {
			if !referrals.CanMove(ref.Status, m.Status) {
				return errBadTransition{ref.Status, m.Status}
			}
			ref.Status = m.Status
			return nil
		})
	}
	if s.statusMoveFailed(w, r, err, "referral") {
		return
	}
	answer, err := s.adminReferral(found)
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	reply.JSON(w, http.StatusOK, answer)
}

func (s *Server) moveQualifiedStatus(w http.ResponseWriter, r *http.Request) {
	m, ok := s.readStatusMove(w, r)
	if !ok {
		return
	}
	id := pathVars(r)["external_source_id"]
	owner, err := s.qualifiedOwner(storeContext(r), id, m.ClientID)
	var updated referrals.QualifiedReferral
	if err == nil {
		updated, err = s.backend.Records.UpdateQualified(storeContext(r), owner, id, func(q *referrals.QualifiedReferral) error {
			return changeQualifiedStatus(q, statusChange{
				To: m.Status, At: s.clocks.Now(owner), Actor: "sandbox-admin", RequestID: reply.RequestID(r),
			})
		})
	}
	if s.statusMoveFailed(w, r, err, "qualified referral") {
		return
	}
	answer, err := s.adminQualified(updated)
	if err != nil {
		s.reply.Fail(w, r, err)
		return
	}
	reply.JSON(w, http.StatusOK, answer)
}

// statusChange is one move of a qualified referral's status: by the admin
// API or by a lifecycle persona, written to the audit trail the same way.
type statusChange struct {
	To        string
	At        time.Time
	Actor     string
	RequestID string
	Reason    string
}

// changeQualifiedStatus moves q's status and appends the status-changed
// entry that explains it, or refuses a move the processing order forbids
// (errBadTransition). It is the one place a qualified referral's status
// moves, so the record and its trail cannot disagree.
func changeQualifiedStatus(q *referrals.QualifiedReferral, c statusChange) error {
	if !referrals.CanMove(q.Status, c.To) {
		return errBadTransition{q.Status, c.To}
	}
	q.AuditTrail = append(q.AuditTrail, referrals.AuditEntry{
		At:     c.At.UTC().Format(referrals.TimestampLayout),
		Action: referrals.AuditStatusChanged, Actor: c.Actor, RequestID: c.RequestID,
		FromStatus: q.Status, ToStatus: c.To, Reason: c.Reason,
	})
	q.Status = c.To
	return nil
}

// qualifiedOwner finds which partner holds externalSourceId, or checks the
// one given.
func (s *Server) qualifiedOwner(ctx context.Context, id, clientID string) (string, error) {
	if clientID != "" {
		return clientID, nil
	}
	clients, err := s.backend.Records.Clients(ctx)
	if err != nil {
		return "", err
	}
	var owners []string
	for _, c := range clients {
		if _, err := s.backend.Records.GetQualified(ctx, c, id, nil); err == nil {
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
func (s *Server) statusMoveFailed(w http.ResponseWriter, r *http.Request, err error, kind string) bool {
	var bad errBadTransition
	switch {
	case err == nil:
		return false
	case errors.Is(err, store.ErrNotFound):
		s.reply.Problem(w, r, reply.New(http.StatusNotFound, "no "+kind+" with that id"))
	case errors.As(err, &bad):
		s.reply.Problem(w, r, reply.New(http.StatusConflict, bad.Error()))
	default:
		s.reply.Fail(w, r, err)
	}
	return true
}
