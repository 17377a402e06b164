package store_test

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store/storetest"
)

// TestConformanceRedisCluster runs the suite on a 3-master Redis Cluster,
// each subtest under its own hash-tagged prefix, as --redis-cluster lays
// keys.
func TestConformanceRedisCluster(t *testing.T) {
	rdb := redistest.StartCluster(t, 3, 0).NewClient(t)
	prefix := redistest.Prefixes("store")
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := store.OpenRedis(rdb, store.WithRedisPrefix(prefix()))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
