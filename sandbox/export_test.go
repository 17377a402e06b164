package sandbox

import (
	"context"
	"fmt"
)

// RateBucketCount reports how many rate-limit buckets s holds, the shared
// unverified one included, in memory or in Redis: tests check that forged
// identities add none.
func RateBucketCount(s *Server) (int, error) {
	switch b := s.limiter.buckets.(type) {
	case *memoryBuckets:
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.buckets), nil
	case sharedBuckets:
		n := 0
		iter := b.rdb.Scan(context.Background(), 0, b.prefix+"*", 1000).Iterator()
		for iter.Next(context.Background()) {
			n++
		}
		return n, iter.Err()
	default:
		return 0, fmt.Errorf("rate-limit buckets of type %T", b)
	}
}

// SharedSettle is how long a replica reuses a read of the shared versions
// (sharedSettle): a test that needs a request to read waits longer.
const SharedSettle = sharedSettle
