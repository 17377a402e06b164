package scenarios_test

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios/rulestest"
)

// TestRedisClusterEngineConformance runs the suite on a 3-master Redis
// Cluster, each test under its own hash-tagged prefix, as --redis-cluster
// lays keys.
func TestRedisClusterEngineConformance(t *testing.T) {
	rdb := redistest.StartCluster(t, 3, 0).NewClient(t)
	prefix := redistest.Prefixes("rules")
	rulestest.Run(t, func(t *testing.T, cfg scenarios.Config) scenarios.Engine {
		return scenarios.NewRedis(rdb, prefix(), 0, cfg)
	})
}
