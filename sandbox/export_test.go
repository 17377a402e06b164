package sandbox

import (
	"context"
	"fmt"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
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

// SharedSettle is how long a replica reuses a read of the shared versions
// (sharedSettle): a test that needs a request to read waits longer.
const SharedSettle = sharedSettle

// HeldConnections reports how many requests delays and hangs hold now.
func HeldConnections(s *Server) int { return s.holds.held() }

// RecordStoreClients is the idp.ClientStore a sandbox that runs alone
// keeps its runtime clients in, for the conformance suite.
func RecordStoreClients(st store.Store) idp.ClientStore { return recordStoreClients{st: st} }
