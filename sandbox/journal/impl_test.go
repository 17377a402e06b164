package journal

import (
	"context"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// impl is one Log implementation under test: newLog returns an empty one
// with the given bounds.
type impl struct {
	name   string
	newLog func(maxEntries int, maxBytes int64) Log
	// checkEvery thins the per-Add checks of the long tests: reading a
	// whole 1 MiB journal back from Redis after every Add is slow.
	checkEvery int
}

// forEachImpl runs test against the in-memory journal and the Redis one,
// so both keep the same bounds, truncation, paging and ids.
func forEachImpl(t *testing.T, test func(t *testing.T, im impl)) {
	t.Run("memory", func(t *testing.T) {
		test(t, impl{name: "memory", checkEvery: 1, newLog: func(n int, b int64) Log { return NewBounded(n, b) }})
	})
	t.Run("redis", func(t *testing.T) {
		rdb := redistest.Start(t).NewClient(t)
		test(t, impl{name: "redis", checkEvery: 25, newLog: func(n int, b int64) Log {
			if err := rdb.FlushDB(context.Background()).Err(); err != nil {
				t.Fatalf("FLUSHDB: %v", err)
			}
			return NewRedis(rdb, "sandbox:", n, b)
		}})
	})
}
