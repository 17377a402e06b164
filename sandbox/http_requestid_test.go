package sandbox_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// A request without its own id gets a new random UUID (version 4, the
// RFC's variant), different on every answer; a client's own id is echoed.
func TestRequestIDs(t *testing.T) {
	s := newSandbox(t)
	tok := s.token(partner)
	seen := map[string]bool{}
	for range 50 {
		id := s.do(request{path: trialsPath, token: tok}).Header.Get(sandbox.RequestIDHeader)
		u, err := uuid.Parse(id)
		if err != nil || len(id) != 36 || u.Version() != 4 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("X-Request-Id %q: want a version 4 UUID (version %v, variant %v, err %v)", id, u.Version(), u.Variant(), err)
		}
		if seen[id] {
			t.Fatalf("X-Request-Id %q given twice", id)
		}
		seen[id] = true
	}
	own := "qa-17.trials"
	if got := s.do(request{path: trialsPath, token: tok, headers: map[string]string{sandbox.RequestIDHeader: own}}).Header.Get(sandbox.RequestIDHeader); got != own {
		t.Errorf("X-Request-Id %q, want the client's own %q echoed", got, own)
	}
}
