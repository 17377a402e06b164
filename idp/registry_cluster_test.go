package idp_test

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/idp/clientstest"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// TestRedisClusterClients runs the suite on a 3-master Redis Cluster, each
// subtest under its own hash-tagged prefix, as --redis-cluster lays keys.
func TestRedisClusterClients(t *testing.T) {
	rdb := redistest.StartCluster(t, 3, 0).NewClient(t)
	prefix := redistest.Prefixes("clients")
	clientstest.Run(t, func(*testing.T) idp.ClientStore { return idp.NewRedisClients(rdb, prefix()) })
}
