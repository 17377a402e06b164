package ratelimit_test

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit/ratelimittest"
)

// TestRedisCluster runs the suite on a 3-master Redis Cluster, each
// subtest under its own hash-tagged prefix, as --redis-cluster lays keys.
func TestRedisCluster(t *testing.T) {
	rdb := redistest.StartCluster(t, 3, 0).NewClient(t)
	prefix := redistest.Prefixes("ratelimit")
	ratelimittest.Run(t, func(*testing.T) ratelimit.Store { return ratelimit.NewRedis(rdb, prefix()+"ratelimit:") })
}
