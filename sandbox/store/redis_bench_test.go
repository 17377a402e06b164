package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// BenchmarkRedisListPage is BenchmarkListReferrals on Redis: a page of 50
// for a client holding 100 and 100,000 referrals among 10,000 of other
// clients. A page is one ZREVRANGEBYLEX on the client's sorted set plus 51
// GETs in one script, so the first page and one from the middle should
// cost about the same at both sizes.
func BenchmarkRedisListPage(b *testing.B) {
	c := redisClient(b)
	for _, n := range []int{100, 100_000} {
		// Resetting to 110,000 records is one script; give it time on a slow
		// machine.
		s := mustOpenRedis(b, c, store.WithRedisPrefix(fmt.Sprintf("bench-%d:", n)), store.WithRedisTimeout(5*time.Minute))
		if err := s.Reset(context.Background(), benchSet(n)); err != nil {
			b.Fatal(err)
		}
		benchPages(b, s, n)
	}
}
