package ratelimit_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit/ratelimittest"
)

// TestRedisCluster runs the suite on a 3-master Redis Cluster, each
// subtest under its own prefix, untagged as --redis-cluster lays the
// buckets: each key carries its client's tag.
func TestRedisCluster(t *testing.T) {
	rdb := redistest.StartCluster(t, 3, 0).NewClient(t)
	var n atomic.Int64
	ratelimittest.Run(t, func(*testing.T) ratelimit.Store {
		return ratelimit.NewRedis(rdb, fmt.Sprintf("ratelimit-%d:ratelimit:", n.Add(1)))
	})
}
