package testutil

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLockedBufferTakesConcurrentWrites(t *testing.T) {
	var b LockedBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := len(b.String()); got != 800 {
		t.Errorf("%d bytes, want 800", got)
	}
}

func TestJWTClaimsDecodesThePayload(t *testing.T) {
	// {"alg":"none"}.{"azp":"a","n":1}.
	claims := JWTClaims(t, "eyJhbGciOiJub25lIn0.eyJhenAiOiJhIiwibiI6MX0.")
	if claims["azp"] != "a" || claims["n"] != float64(1) {
		t.Errorf("claims %v", claims)
	}
}

func TestEventuallyReturnsOnceTrue(t *testing.T) {
	calls := 0
	Eventually(t, time.Minute, func() error {
		if calls++; calls < 4 {
			return errors.New("not yet")
		}
		return nil
	})
	if calls != 4 {
		t.Errorf("cond called %d times, want 4", calls)
	}
}

// fatalRecorder is a testing.TB whose Fatalf records instead of stopping.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.msg = fmt.Sprintf(format, args...) }
func (r *fatalRecorder) Helper()                           {}

func TestEventuallyFailsWithTheLastError(t *testing.T) {
	r := &fatalRecorder{TB: t}
	n := 0
	Eventually(r, 20*time.Millisecond, func() error {
		n++
		if r.msg != "" {
			return nil // Fatalf was called: let the helper return
		}
		return fmt.Errorf("attempt %d", n)
	})
	if !strings.Contains(r.msg, "still not so after 20ms: attempt") {
		t.Errorf("Fatalf message %q", r.msg)
	}
}
