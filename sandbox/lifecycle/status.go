package lifecycle

import (
	"fmt"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Change is one move of a qualified referral's status: by the admin API
// or by a lifecycle persona, written to the audit trail the same way.
type Change struct {
	// To is the status moved to.
	To string
	// At is when, on the record's client's clock.
	At time.Time
	// Actor names who moved it in the audit trail.
	Actor string
	// RequestID is the request that moved it, so the trail leads to the
	// journal.
	RequestID string
	// Reason, when set, explains the move in the audit trail.
	Reason string
}

// BadTransition refuses a status change the processing order forbids.
type BadTransition struct {
	// From and To are the statuses of the refused move.
	From, To string
}

// Error says which moves the status allows instead, so the caller can
// correct the request.
func (e BadTransition) Error() string {
	next := referrals.NextStatuses(e.From)
	if len(next) == 0 {
		return fmt.Sprintf("status %s is final; it cannot move to %s", e.From, e.To)
	}
	return fmt.Sprintf("status %s can move to %s, not to %s", e.From, strings.Join(next, ", "), e.To)
}

// ChangeStatus moves q's status and appends the status-changed entry that
// explains it, or refuses a move the processing order forbids
// (BadTransition). It is the one place a qualified referral's status
// moves, so the record and its trail cannot disagree.
func ChangeStatus(q *referrals.QualifiedReferral, c Change) error {
	if !referrals.CanMove(q.Status, c.To) {
		return BadTransition{q.Status, c.To}
	}
	q.AuditTrail = append(q.AuditTrail, referrals.AuditEntry{
		At:     c.At.UTC().Format(referrals.TimestampLayout),
		Action: referrals.AuditStatusChanged, Actor: c.Actor, RequestID: c.RequestID,
		FromStatus: q.Status, ToStatus: c.To, Reason: c.Reason,
	})
	q.Status = c.To
	return nil
}
