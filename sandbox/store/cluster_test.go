package store_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store/storetest"
)

// TestConformanceRedisCluster runs the suite on a 3-master Redis Cluster,
// each subtest under its own prefix, which --redis-cluster does not tag:
// the store tags each client's keys, and its global ones.
func TestConformanceRedisCluster(t *testing.T) {
	rdb := redistest.StartCluster(t, 3, 0).NewClient(t)
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := store.OpenRedis(rdb, store.WithRedisPrefix(fmt.Sprintf("store-%d:", n.Add(1))))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
