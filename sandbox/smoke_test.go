package sandbox_test

import (
	"net/http"
	"testing"
)

// TestHarness proves the harness talks to a real server: a token, then the
// trials list.
func TestHarness(t *testing.T) {
	s := newSandbox(t)
	r := s.do(request{path: "/api/v1/referrals/trials", token: s.token(partner)})
	if r.Status != http.StatusOK {
		t.Fatalf("trials: %d %s", r.Status, r.Body)
	}
}
