package sandbox

// RateBucketCount reports how many rate-limit buckets s holds, the shared
// unverified one included: tests check that forged identities add none.
func RateBucketCount(s *Server) int {
	m, ok := s.limiter.buckets.(*memoryBuckets)
	if !ok {
		return -1 // shared buckets live in Redis
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.buckets)
}

// SharedSettle is how long a replica reuses a read of the shared versions
// (sharedSettle): a test that needs a request to read waits longer.
const SharedSettle = sharedSettle

// HeldConnections reports how many requests delays and hangs hold now.
func HeldConnections(s *Server) int { return s.holds.held() }
