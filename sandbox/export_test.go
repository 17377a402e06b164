package sandbox

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
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
func HeldConnections(s *Server) int { return s.holds.held() }

// RecordStoreClients is the idp.ClientStore a sandbox that runs alone
// keeps its runtime clients in, for the conformance suite.
func RecordStoreClients(st store.Store) idp.ClientStore { return recordStoreClients{st: st} }

// ExpireSharedRead makes s's next request read the shared versions from
// Redis, as it does once its last read is older than sharedSettle, without
// waiting that long. A read ahead still running is waited for first, so
// that none lands after.
func ExpireSharedRead(t testing.TB, s *Server) {
	t.Helper()
	waitNoReadAhead(t, s.shared)
	s.shared.mu.Lock()
	s.shared.lastAt = time.Time{}
	s.shared.mu.Unlock()
}

// WaitBackground returns once s has stored every journal entry queued
// before the call and no read ahead of the shared versions runs: the
// Redis round trips of the requests s has answered are then all made.
func WaitBackground(t testing.TB, s *Server) {
	t.Helper()
	if err := s.journal.Flush(t.Context()); err != nil {
		t.Fatalf("flush the journal: %v", err)
	}
	waitNoReadAhead(t, s.shared)
}

// waitNoReadAhead waits until no read ahead of sh runs. A request starts
// one before it is answered, and one clears its mark only after its read,
// so once answers are in, a clear mark means their reads are done.
func waitNoReadAhead(t testing.TB, sh *sharedState) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() error {
		if sh.readingAhead.Load() {
			return errors.New("a read ahead of the shared versions is still running")
		}
		return nil
	})
}
