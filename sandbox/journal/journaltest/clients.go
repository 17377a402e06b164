package journaltest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// testClearClientAmidAdds: adds of several clients, with clients' journals
// cleared in between, keep exactly what a plain list of the latest
// entries would (the count bound dropping the oldest kept, clears removing
// only that client's), with ids counting up and Usage in step.
func testClearClientAmidAdds(t *testing.T, im impl) {
	const maxEntries = 30
	j := im.newLog(maxEntries, journal.DefaultMaxBytes)
	rng := rand.New(rand.NewPCG(1, 2))
	var model []journal.Entry
	var lastID uint64
	for step := range 400 {
		switch op := rng.IntN(10); {
		case op < 8:
			e := journal.Entry{ClientID: fmt.Sprint("c", rng.IntN(4)), RequestID: fmt.Sprint(step)}
			if rng.IntN(5) == 0 {
				e.ClientID = "" // unidentified: never cleared by client
			}
			j.Add(e)
			lastID++
			e.ID = lastID
			if len(model) == maxEntries {
				model = model[1:]
			}
			model = append(model, e)
		case op < 9:
			c := fmt.Sprint("c", rng.IntN(4))
			j.ClearClient(c)
			kept := model[:0:0]
			for _, e := range model {
				if e.ClientID != c {
					kept = append(kept, e)
				}
			}
			model = kept
		default:
			if rng.IntN(8) == 0 {
				j.Clear()
				model = nil
			}
		}
		if step%im.checkEvery != 0 && step != 399 {
			continue
		}
		got := j.Find(journal.Filter{})
		if len(got) != len(model) {
			t.Fatalf("step %d: %d entries kept, want %d", step, len(got), len(model))
		}
		var want int64
		for i, e := range got {
			if e.ID != model[i].ID || e.RequestID != model[i].RequestID || e.ClientID != model[i].ClientID {
				t.Fatalf("step %d: entry %d is %d/%s/%s, want %d/%s/%s", step, i, e.ID, e.RequestID, e.ClientID, model[i].ID, model[i].RequestID, model[i].ClientID)
			}
			want += e.Size()
		}
		if n, bytes := j.Usage(); n != len(model) || bytes != want {
			t.Fatalf("step %d: Usage %d entries %d bytes, want %d and %d", step, n, bytes, len(model), want)
		}
	}
}
