package redistest

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// RefuseWrites makes the Redis behind rdb refuse every write with OOM
// while it still answers reads and PING, as a Redis that has run out of
// memory does: maxmemory 1 under noeviction. allow lifts it; it is lifted
// when t ends as well, so a server the test shares is left writable.
func RefuseWrites(t testing.TB, rdb redis.Cmdable) (allow func()) {
	t.Helper()
	ctx := context.Background()
	for _, kv := range [][2]string{{"maxmemory-policy", "noeviction"}, {"maxmemory", "1"}} {
		if err := rdb.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatalf("redistest: refuse writes: CONFIG SET %s %s: %v", kv[0], kv[1], err)
		}
	}
	// At the end the server may be gone already (a test that stopped it),
	// and nothing is left to lift.
	t.Cleanup(func() { _ = rdb.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	return func() {
		t.Helper()
		if err := rdb.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
			t.Fatalf("redistest: allow writes: CONFIG SET maxmemory 0: %v", err)
		}
	}
}
