package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// addScript keeps, batch by batch, exactly what adding the same entries one
// at a time would: the longest run of the newest within both bounds, and at
// least the newest. The model below is the one-at-a-time rule; the batches
// are cut at random, so a batch often drops entries of its own (and then
// every older one), which the conformance suite cannot arrange.
func TestAddScriptKeepsWhatOneAtATimeWould(t *testing.T) {
	rdb := redistest.Start(t).NewClient(t)
	ctx := context.Background()
	for seed := range uint64(12) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			if err := rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatalf("FLUSHDB: %v", err)
			}
			rng := rand.New(rand.NewPCG(seed, 27))
			maxEntries, maxBytes := 1+rng.IntN(40), int64(1000+rng.IntN(4000))
			j := NewRedis(rdb, "t:", maxEntries, maxBytes)
			j.maxBytes = maxBytes // below MinMaxBytes, so that small sizes fill it
			if err := j.append(nil); err != nil {
				t.Fatalf("an empty batch: %v", err)
			}

			type kept struct {
				id   int
				size int64
			}
			var model []kept // the one-at-a-time journal
			var modelBytes int64
			next := 1
			for range 30 {
				batch := make([]pendingEntry, 1+rng.IntN(maxAddBatch/4))
				for i := range batch {
					size := int64(1 + rng.IntN(int(maxBytes)/3))
					if rng.IntN(50) == 0 {
						size = maxBytes + 1 // larger than the budget: kept alone, until the next
					}
					client := fmt.Sprint("c", next%3)
					raw, err := json.Marshal(Entry{RequestID: fmt.Sprint(next), ClientID: client})
					if err != nil {
						t.Fatal(err)
					}
					batch[i] = pendingEntry{size: size, clientID: client, json: raw}
					for len(model) > 0 && (len(model) >= maxEntries || modelBytes+size > maxBytes) {
						modelBytes -= model[0].size
						model = model[1:]
					}
					model = append(model, kept{id: next, size: size})
					modelBytes += size
					next++
				}
				if err := j.append(batch); err != nil {
					t.Fatalf("append: %v", err)
				}
				all, err := j.Find(ctx, Filter{})
				if err != nil {
					t.Fatalf("Find: %v", err)
				}
				var got, want []string
				for _, e := range all {
					got = append(got, fmt.Sprint(e.ID, "/", e.RequestID))
				}
				for _, k := range model {
					want = append(want, fmt.Sprint(k.id, "/", k.id))
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("after a batch of %d (bounds %d entries, %d bytes):\nkept %v\nwant %v", len(batch), maxEntries, maxBytes, got, want)
				}
				if n, b, err := j.Usage(ctx); err != nil || n != len(model) || b != modelBytes {
					t.Fatalf("Usage = %d entries, %d bytes (%v); want %d, %d", n, b, err, len(model), modelBytes)
				}
				for c := range 3 {
					id := fmt.Sprint("c", c)
					mine, err := j.Find(ctx, Filter{ClientID: id})
					if err != nil {
						t.Fatalf("Find %s: %v", id, err)
					}
					var wantMine int
					for _, k := range model {
						if k.id%3 == c {
							wantMine++
						}
					}
					if len(mine) != wantMine {
						t.Fatalf("client %s: %d entries, want %d", id, len(mine), wantMine)
					}
				}
			}
		})
	}
}
