package clock_test

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/clock/clocktest"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// TestRedisClusterStore runs the suite on a 3-master Redis Cluster, each
// subtest under its own hash-tagged prefix, as --redis-cluster lays keys.
func TestRedisClusterStore(t *testing.T) {
	rdb := redistest.StartCluster(t, 3, 0).NewClient(t)
	prefix := redistest.Prefixes("clock")
	clocktest.Run(t, func(_ *testing.T, clocks *clock.PerClient) clock.Store {
		return clock.NewRedis(rdb, clock.NewRedisKeys(prefix()), clocks)
	})
}
