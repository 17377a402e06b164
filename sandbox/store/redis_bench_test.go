package store_test

import (
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
		// Loading 110,000 records is one script; give it time on a slow
		// machine.
		s := mustOpenRedis(b, c, store.WithRedisPrefix(fmt.Sprintf("bench-%d:", n)), store.WithRedisTimeout(5*time.Minute))
		if err := s.Load(benchSet(n)); err != nil {
			b.Fatal(err)
		}
		middle := cursorAt(b, s, n/2)
		for _, page := range []struct{ name, cursor string }{{"first", ""}, {"middle", middle}} {
			b.Run(fmt.Sprintf("n=%d/%s", n, page.name), func(b *testing.B) {
				for b.Loop() {
					got, _, err := s.ListReferrals("client-b", store.Page{Limit: 50, Cursor: page.cursor})
					if err != nil || len(got) != 50 {
						b.Fatalf("listed %d records: %v", len(got), err)
					}
				}
			})
		}
	}
}
