package sandbox_test

import (
	"net/http"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// TestAuditTrailInOrderAfterClockMovedBack: the audit trail lists what
// happened in the order it happened. After the partner's clock is moved
// back, an admin status move and a read still come after the submission,
// and no entry's time is earlier than the entry's before it: the later
// entries take the submission's time.
func TestAuditTrailInOrderAfterClockMovedBack(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	submitted, _ := s.createQualified(token, "ORDER-1")
	s.moveClock(map[string]any{"clientId": partner, "advance": "-2h"})
	if r := s.admin(http.MethodPost, "/__sandbox/qualified/ORDER-1/status", map[string]string{"status": referrals.StatusReviewing}); r.Status != http.StatusOK {
		t.Fatalf("move the status: %d %s", r.Status, r.Body)
	}
	if r := s.do(request{method: http.MethodGet, path: "/api/v1/referrals/qualified/ORDER-1", token: token}); r.Status != http.StatusOK {
		t.Fatalf("read: %d %s", r.Status, r.Body)
	}
	r := s.do(request{method: http.MethodGet, path: "/api/v1/referrals/qualified/ORDER-1/audit-trail", token: token})
	if r.Status != http.StatusOK {
		t.Fatalf("audit trail: %d %s", r.Status, r.Body)
	}
	var page struct {
		AuditTrail []referrals.AuditEntry `json:"auditTrail"`
	}
	r.decode(t, &page)
	var actions []string
	for i, e := range page.AuditTrail {
		actions = append(actions, e.Action)
		if i > 0 && e.At < page.AuditTrail[i-1].At {
			t.Errorf("entry %d (%s) at %s is earlier than the entry before it, at %s", i, e.Action, e.At, page.AuditTrail[i-1].At)
		}
		if i > 0 && e.At != submitted.SubmittedAt {
			t.Errorf("entry %d (%s) at %s; want the submission's time %s (the clock was moved back)", i, e.Action, e.At, submitted.SubmittedAt)
		}
	}
	want := []string{referrals.AuditSubmitted, referrals.AuditStatusChanged, referrals.AuditViewed}
	if len(actions) != len(want) || actions[0] != want[0] || actions[1] != want[1] || actions[2] != want[2] {
		t.Errorf("trail %v, want %v", actions, want)
	}
}
