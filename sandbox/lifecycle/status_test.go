package lifecycle_test

import (
	"errors"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/lifecycle"
)

// A status move and the audit entry that explains it are made together:
// what a partner reads as the status is what the trail's last entry says.
func TestChangeStatusWritesTheAuditEntry(t *testing.T) {
	q := referrals.QualifiedReferral{Status: referrals.StatusReceived}
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	err := lifecycle.ChangeStatus(&q, lifecycle.Change{To: referrals.StatusReviewing, At: at, Actor: "sandbox-admin", RequestID: "req-1", Reason: "checked"})
	if err != nil {
		t.Fatal(err)
	}
	if q.Status != referrals.StatusReviewing || len(q.AuditTrail) != 1 {
		t.Fatalf("after the move: status %q, trail %+v; want reviewing and one entry", q.Status, q.AuditTrail)
	}
	e := q.AuditTrail[0]
	if e.Action != referrals.AuditStatusChanged || e.FromStatus != referrals.StatusReceived || e.ToStatus != referrals.StatusReviewing ||
		e.Actor != "sandbox-admin" || e.RequestID != "req-1" || e.Reason != "checked" || e.At != at.Format(referrals.TimestampLayout) {
		t.Errorf("audit entry = %+v", e)
	}
}

// A move the processing order forbids changes nothing and says which
// moves the status allows.
func TestChangeStatusRefusesAForbiddenMove(t *testing.T) {
	q := referrals.QualifiedReferral{Status: referrals.StatusReceived}
	err := lifecycle.ChangeStatus(&q, lifecycle.Change{To: referrals.StatusEnrolled})
	var bad lifecycle.BadTransition
	if !errors.As(err, &bad) || bad.From != referrals.StatusReceived || bad.To != referrals.StatusEnrolled {
		t.Fatalf("ChangeStatus(received to enrolled) = %v, want BadTransition", err)
	}
	if want := "status received can move to reviewing, rejected, withdrawn, not to enrolled"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if q.Status != referrals.StatusReceived || len(q.AuditTrail) != 0 {
		t.Errorf("a refused move changed the record: status %q, trail %+v", q.Status, q.AuditTrail)
	}
}
