package sandbox

// RateBucketCount reports how many rate-limit buckets s holds, the shared
// unverified one included: tests check that forged identities add none.
func RateBucketCount(s *Server) int { return s.limiter.size() }
