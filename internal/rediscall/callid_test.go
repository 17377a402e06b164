package rediscall_test

import (
	"encoding/hex"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
)

// TestCallID: an id is 128 random bits in hex, and no two calls share one.
func TestCallID(t *testing.T) {
	const n = 100000
	seen := make(map[string]bool, n)
	for range n {
		id := rediscall.CallID()
		if b, err := hex.DecodeString(id); err != nil || len(b) != 16 {
			t.Fatalf("CallID() = %q: want 32 hex digits (128 bits)", id)
		}
		if seen[id] {
			t.Fatalf("CallID() gave %q twice in %d calls", id, len(seen)+1)
		}
		seen[id] = true
	}
}
