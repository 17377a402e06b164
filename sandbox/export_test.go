package sandbox

import (
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// RateBucketCount reports how many rate-limit buckets s holds, the shared
// unverified one included: tests check that forged identities add none.
func RateBucketCount(s *Server) int {
	m, ok := s.limiter.buckets.Store().(*ratelimit.Memory)
	if !ok {
		return -1 // shared buckets live in Redis
	}
	return m.Len()
}

// SharedSettle is how long a replica reuses a read of the shared versions
// (sharedSettle): a test that needs a request to read waits longer.
const SharedSettle = sharedSettle

// HeldConnections reports how many requests delays and hangs hold now.
func HeldConnections(s *Server) int { return s.holds.held() }

// RecordStoreClients is the idp.ClientStore a sandbox that runs alone
// keeps its runtime clients in, for the conformance suite.
func RecordStoreClients(st store.Store) idp.ClientStore { return recordStoreClients{st: st} }
