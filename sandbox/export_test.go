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
