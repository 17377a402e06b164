package journal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// TestRedisJournalUpgradesOldLayout: a journal written before the index
// existed (a stream and a list of sizes) is indexed by the next append:
// its entries stay, a client's clear finds them, the byte total holds, and
// the old list is gone.
func TestRedisJournalUpgradesOldLayout(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).NewClient(t)
	var total int64
	for i, c := range []string{"a", "b", "a"} {
		e := journal.Entry{ClientID: c, RequestID: fmt.Sprint(i)}
		raw, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		size := e.Size()
		total += size
		msg := &redis.XAddArgs{Stream: "sandbox:journal:stream", ID: fmt.Sprintf("%d-0", i+1), Values: []any{"s", size, "c", c, "e", raw}}
		if err := rdb.XAdd(ctx, msg).Err(); err != nil {
			t.Fatal(err)
		}
		rdb.RPush(ctx, "sandbox:journal:sizes", size)
	}
	rdb.Set(ctx, "sandbox:journal:seq", 3, 0)
	rdb.Set(ctx, "sandbox:journal:bytes", total, 0)

	j := journal.NewRedis(rdb, "sandbox:", 100, journal.DefaultMaxBytes)
	if err := j.Add(ctx, journal.Entry{ClientID: "b", RequestID: "3"}); err != nil {
		t.Fatal(err)
	}
	if err := j.ClearClient(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	got, err := j.Find(ctx, journal.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var want int64
	for _, e := range got {
		ids = append(ids, fmt.Sprint(e.ID, e.ClientID))
		want += e.Size()
	}
	if fmt.Sprint(ids) != "[2b 4b]" {
		t.Errorf("entries %v, want b's entries 2 and 4", ids)
	}
	if n, bytes, err := j.Usage(ctx); err != nil || n != 2 || bytes != want {
		t.Errorf("Usage %d %d %v, want 2 entries of %d bytes", n, bytes, err, want)
	}
	if n := rdb.Exists(ctx, "sandbox:journal:sizes").Val(); n != 0 {
		t.Error("the old list of sizes is still there")
	}
}
