package journal_test

import (
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// TestRedisJournalRefusesToSkipAMalformedEntry: an entry written under the
// journal's keys by something else fails every read that meets it, with
// ErrCorrupt, instead of vanishing from the pages (and from what the
// report judges); clearing the journal removes it.
func TestRedisJournalRefusesToSkipAMalformedEntry(t *testing.T) {
	ctx := t.Context()
	rdb := redistest.Start(t).NewClient(t)
	j := journal.NewRedis(rdb, "sandbox:", 100, journal.DefaultMaxBytes)
	if err := j.Add(ctx, journal.Entry{ClientID: "a", RequestID: "before"}); err != nil {
		t.Fatal(err)
	}
	if err := j.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	bad := &redis.XAddArgs{Stream: "sandbox:journal:stream", Values: []any{"s", 10, "c", "a", "e", "{not json"}}
	if err := rdb.XAdd(ctx, bad).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Find(ctx, journal.Filter{}); !errors.Is(err, journal.ErrCorrupt) {
		t.Errorf("Find: %v, want ErrCorrupt", err)
	}
	if _, _, err := j.After(ctx, journal.Filter{}, 10); !errors.Is(err, journal.ErrCorrupt) {
		t.Errorf("After: %v, want ErrCorrupt", err)
	}
	if _, err := j.Latest(ctx, journal.Filter{}, 10); !errors.Is(err, journal.ErrCorrupt) {
		t.Errorf("Latest: %v, want ErrCorrupt", err)
	}
	if err := j.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := j.Find(ctx, journal.Filter{}); err != nil || len(got) != 0 {
		t.Errorf("after Clear: %v %v, want an empty journal", got, err)
	}
}
