package journal_test

import (
	"context"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal/journaltest"
)

func TestMemoryJournalConformance(t *testing.T) {
	journaltest.Run(t, func(_ *testing.T, n int, b int64) journal.Log { return journal.NewBounded(n, b) }, 1)
}

// TestRedisJournalConformance runs the suite on one private Redis, emptied
// before each journal is opened.
func TestRedisJournalConformance(t *testing.T) {
	rdb := redistest.Start(t).NewClient(t)
	journaltest.Run(t, func(t *testing.T, n int, b int64) journal.Log {
		if err := rdb.FlushDB(context.Background()).Err(); err != nil {
			t.Fatalf("FLUSHDB: %v", err)
		}
		return journal.NewRedis(rdb, "sandbox:", n, b)
	}, 25)
}
