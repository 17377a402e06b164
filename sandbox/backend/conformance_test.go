package backend_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend/backendtest"
)

// opener opens each backend with where as its Redis, or in this process
// when where is zero, and closes it when its test ends.
func opener(where func() backend.RedisConfig) backendtest.Opener {
	return func(t *testing.T, cfg backend.Config) *backend.Backend {
		t.Helper()
		cfg.Redis = where()
		b, err := backend.Open(context.Background(), cfg)
		if err != nil {
			t.Fatalf("open the backend: %v", err)
		}
		t.Cleanup(func() {
			if err := b.Close(); err != nil {
				t.Errorf("close the backend: %v", err)
			}
		})
		return b
	}
}

// prefixes gives a new key prefix at each call, so that the backends one
// Redis holds for a run's tests never see each other's state. They carry
// no brace: on a cluster the backend adds the hash tags itself.
func prefixes() func() string {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("backendtest-%d:", n.Add(1)) }
}

// TestMemoryConformance runs every part's suite on backends in this
// process, their records in memory.
func TestMemoryConformance(t *testing.T) {
	backendtest.Run(t, opener(func() backend.RedisConfig { return backend.RedisConfig{} }))
}

// TestRedisConformance runs every part's suite on backends in one Redis,
// each under a prefix of its own.
func TestRedisConformance(t *testing.T) {
	url, prefix := redistest.Start(t).URL, prefixes()
	backendtest.Run(t, opener(func() backend.RedisConfig { return backend.RedisConfig{URL: url, Prefix: prefix()} }))
}

// TestRedisClusterConformance runs every part's suite on backends in one
// 3-master Redis Cluster, each under a prefix of its own, the keys laid as
// --redis-cluster lays them.
func TestRedisClusterConformance(t *testing.T) {
	url, prefix := redistest.StartCluster(t, 3, 0).URL, prefixes()
	backendtest.Run(t, opener(func() backend.RedisConfig { return backend.RedisConfig{ClusterURL: url, Prefix: prefix()} }))
}
