package sandbox_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestAbortedFaultIsJournaled: where a fault cannot take the connection
// over (HTTP/2, or any writer that cannot be hijacked), it aborts the
// answer. Every layer still records the request, rule and fault included,
// before the server aborts it.
func TestAbortedFaultIsJournaled(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	token := s.token(partner)
	rule := s.addRule(map[string]any{"endpoint": "api", "fault": "reset", "times": 1})
	req := httptest.NewRequest(http.MethodGet, trialsPath, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	func() {
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Fatalf("ServeHTTP ended with %v, want the abort net/http documents", v)
			}
		}()
		s.server.ServeHTTP(httptest.NewRecorder(), req)
	}()
	got := s.journal(nil)
	if len(got) == 0 {
		t.Fatal("the aborted request is not in the journal")
	}
	e := got[len(got)-1]
	want := sandbox.JournalEntry{Path: trialsPath, Fault: "reset", RuleID: rule, ClientID: partner}
	if e.Path != want.Path || e.Fault != want.Fault || e.RuleID != want.RuleID || e.ClientID != want.ClientID || e.Status != 0 {
		t.Errorf("journal entry = %+v, want path, fault, rule and client %+v and no status", e, want)
	}
}
