package store_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store/storetest"
)

// redisClient starts a private redis-server for t and returns a client of
// it, closed when t ends.
func redisClient(t testing.TB) *redis.Client {
	t.Helper()
	srv := redistest.Start(t)
	// No socket timeouts: each store operation's context deadline bounds
	// it, as --redis-timeout does in the sandbox.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, ReadTimeout: -1, WriteTimeout: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func mustOpenRedis(t testing.TB, c *redis.Client, opts ...store.RedisOption) *store.RedisStore {
	t.Helper()
	s, err := store.OpenRedis(c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConformanceRedis runs the conformance suite on one redis-server,
// each subtest under a prefix of its own: that the subtests never see
// each other's records also shows that prefixes separate sandboxes.
func TestConformanceRedis(t *testing.T) {
	c := redisClient(t)
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) store.Store {
		return mustOpenRedis(t, c, store.WithRedisPrefix(fmt.Sprintf("conformance-%d:", n.Add(1))))
	})
}
