package journal_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// BenchmarkClearClient clears one client's 10 entries from journals holding
// more and more of everyone else's: the cost stays flat, in memory and in
// Redis (where it once read the whole stream, blocking every replica).
func BenchmarkClearClient(b *testing.B) {
	sizes := []int{1000, 10000, 50000}
	b.Run("memory", func(b *testing.B) {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
				benchClearClient(b, journal.NewBounded(n+100, journal.DefaultMaxBytes), n)
			})
		}
	})
	b.Run("redis", func(b *testing.B) {
		rdb := redistest.Start(b).NewClient(b)
		for _, n := range sizes {
			b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
				if err := rdb.FlushDB(context.Background()).Err(); err != nil {
					b.Fatal(err)
				}
				benchClearClient(b, journal.NewRedis(rdb, "sandbox:", n+100, journal.DefaultMaxBytes), n)
			})
		}
	})
}

// benchClearClient fills j with n entries of other clients, then times
// adding 10 entries of one client and clearing them.
func benchClearClient(b *testing.B, j journal.Log, n int) {
	ctx := context.Background()
	for i := range n {
		if err := j.Add(ctx, journal.Entry{Path: "/api/v1/referrals/trials", ClientID: fmt.Sprint("other-", i%50)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := j.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for range 10 {
			if err := j.Add(ctx, journal.Entry{Path: "/api/v1/referrals/trials", ClientID: "ci-job"}); err != nil {
				b.Fatal(err)
			}
		}
		if err := j.ClearClient(ctx, "ci-job"); err != nil {
			b.Fatal(err)
		}
	}
}
