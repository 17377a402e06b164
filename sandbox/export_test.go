package sandbox

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
)

// RateBucketCount reports how many rate-limit buckets s holds, the shared
// unverified one included, in memory or in Redis: tests check that forged
// identities add none.
func RateBucketCount(s *Server) (int, error) {
	switch b := s.limiter.buckets.Store().(type) {
	case *ratelimit.Memory:
		return b.Len(), nil
	case *ratelimit.Redis:
		return b.Len(context.Background())
	default:
		return 0, fmt.Errorf("rate-limit buckets of type %T", b)
	}
}

// HeldConnections reports how many requests delays and hangs hold now.
func HeldConnections(s *Server) int { return s.failures.Held() }

// ExpireSharedRead makes s's next request read the shared versions from
// Redis, as it does once its last read is older than the settle window,
// without waiting that long (backend.Backend.ExpireRead).
func ExpireSharedRead(t testing.TB, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := s.backend.ExpireRead(ctx); err != nil {
		t.Fatal(err)
	}
}

// WaitBackground returns once s has stored every journal entry queued
// before the call and no read ahead of the shared versions runs: the
// Redis round trips of the requests s has answered are then all made.
func WaitBackground(t testing.TB, s *Server) {
	t.Helper()
	if err := s.backend.Journal.Flush(t.Context()); err != nil {
		t.Fatalf("flush the journal: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := s.backend.WaitReadAhead(ctx); err != nil {
		t.Fatal(err)
	}
}
