// Package testutil holds the helpers that tests in several packages share,
// so that each exists once: a buffer a server may log into while the test
// reads it, and a JWT payload decoder.
package testutil

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
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
