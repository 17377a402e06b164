// Package testutil holds the helpers that tests in several packages share,
// so that each exists once: a buffer a server may log into while the test
// reads it, a JWT payload decoder, and the one way tests poll (Eventually).
package testutil

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// LockedBuffer is a bytes.Buffer that a server's goroutines or a child
// process's output copier may write while the test reads it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// JWTClaims decodes the payload of a compact JWT without verifying it:
// tests that check signatures do so with a real verifier; these look at
// the claims' shape. It fails the test on anything that is not a compact
// JWT with a JSON object payload.
func JWTClaims(t testing.TB, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWT (%d parts, want 3)", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("JWT payload: %v", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatalf("JWT payload: %v", err)
	}
	return claims
}

// Eventually calls cond until it returns nil, and fails the test with
// cond's last error when within passes first. It is how a test waits for
// what it can only observe from outside (a journal entry written in the
// background, a server that comes back): never a sleep. It checks again
// after 1 ms, then after twice as long each time up to 100 ms, so a signal
// that comes at once is seen at once and a slow one costs little CPU;
// within is a bound for a loaded machine, never the expected pace.
func Eventually(t testing.TB, within time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	pause := time.Millisecond
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still not so after %s: %v", within, err)
		}
		time.Sleep(pause) // between two looks, not in place of one
		pause = min(2*pause, 100*time.Millisecond)
	}
}
