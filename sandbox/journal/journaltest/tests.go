package journaltest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// bounds names a journal's two bounds for a table of cases.
type bounds struct {
	name       string
	maxEntries int
	maxBytes   int64
}

// testBudgetHoldsAfterEveryAdd: whatever mix of sizes arrives, the journal
// never holds more than its byte budget or its entry count, drops only the
// oldest, and Clear gives every byte back.

func testBudgetHoldsAfterEveryAdd(t *testing.T, im impl) {
	j := im.newLog(1000, journal.MinMaxBytes)
	var lastKept uint64
	for i := range 600 {
		// Sizes cycle from a few hundred bytes to the largest truncate leaves.
		headers := map[string]string{}
		for h := range i % (journal.MaxHeaders + 10) {
			headers[fmt.Sprintf("X-H-%03d", h)] = strings.Repeat("v", (i*37)%(2*journal.MaxValueBytes))
		}
		j.Add(journal.Entry{Path: "/p", RequestID: fmt.Sprint(i), Headers: headers})
		if i%im.checkEvery != 0 && i != 599 {
			continue
		}
		n, bytes := j.Usage()
		if bytes > journal.MinMaxBytes || n > 1000 || n == 0 {
			t.Fatalf("after entry %d: %d entries, %d bytes; budget %d", i, n, bytes, journal.MinMaxBytes)
		}
		all := j.Find(journal.Filter{})
		if all[len(all)-1].RequestID != fmt.Sprint(i) {
			t.Fatalf("after entry %d the newest kept is %s", i, all[len(all)-1].RequestID)
		}
		if all[0].ID < lastKept {
			t.Fatalf("entry %d came back after it was dropped", all[0].ID)
		}
		lastKept = all[0].ID
		var sum int64
		for _, e := range all {
			sum += e.Size()
		}
		if sum != bytes {
			t.Fatalf("after entry %d: entries sum to %d bytes, Usage says %d", i, sum, bytes)
		}
	}
	if lastKept == 1 {
		t.Fatal("nothing was ever dropped: the test sent too little")
	}
	j.Clear()
	if n, bytes := j.Usage(); n != 0 || bytes != 0 {
		t.Errorf("after Clear: %d entries, %d bytes", n, bytes)
	}
}

// testCountBoundStillHolds: small entries are bounded by the entry count.
func testCountBoundStillHolds(t *testing.T, im impl) {
	func() {
		j := im.newLog(3, journal.DefaultMaxBytes)
		for i := range 5 {
			j.Add(journal.Entry{RequestID: fmt.Sprint(i)})
		}
		got := j.Find(journal.Filter{})
		if len(got) != 3 || got[0].RequestID != "2" || got[2].RequestID != "4" || got[2].ID != 5 {
			t.Errorf("kept %+v, want entries 2 to 4, the last numbered 5", got)
		}
		if n, _ := j.Usage(); n != 3 {
			t.Errorf("Usage counts %d entries, want 3", n)
		}
	}()
}

// testPagingWalksEveryEntryOnce: following nextAfterId (the last id of each
// page) visits every matching entry once, in order, and Latest gives the
// newest ones; Clear keeps ids counting up.
func testPagingWalksEveryEntryOnce(t *testing.T, im impl) {
	func() {
		j := im.newLog(2000, journal.DefaultMaxBytes)
		for i := range 1200 {
			j.Add(journal.Entry{ClientID: fmt.Sprint("c", i%3), RequestID: fmt.Sprint(i)})
		}
		f := journal.Filter{ClientID: "c1"}
		var seen []string
		for pages := 0; ; pages++ {
			page, more := j.After(f, 7)
			for _, e := range page {
				seen = append(seen, e.RequestID)
			}
			if !more {
				break
			}
			if len(page) != 7 || pages > 100 {
				t.Fatalf("page %d has %d entries and more follow", pages, len(page))
			}
			f.AfterID = page[len(page)-1].ID
		}
		if len(seen) != 400 || seen[0] != "1" || seen[399] != "1198" {
			t.Fatalf("walked %d entries (%v ... ), want the 400 of c1 from 1 to 1198", len(seen), seen[:min(3, len(seen))])
		}
		latest := j.Latest(journal.Filter{ClientID: "c2"}, 2)
		if len(latest) != 2 || latest[0].RequestID != "1196" || latest[1].RequestID != "1199" {
			t.Errorf("Latest(c2, 2) = %+v", latest)
		}
		if got := j.Find(journal.Filter{Limit: 1}); len(got) != 1 || got[0].ID != 1200 {
			t.Errorf("Find with limit 1 = %+v, want entry 1200", got)
		}
		j.Clear()
		j.Add(journal.Entry{RequestID: "after"})
		if got := j.Find(journal.Filter{}); len(got) != 1 || got[0].ID != 1201 {
			t.Errorf("after Clear: %+v, want one entry numbered 1201", got)
		}
	}()
}

func testClearClientKeepsOthersInOrder(t *testing.T, im impl) {
	for _, size := range []int{3, 4, 10} {
		j := im.newLog(size, journal.DefaultMaxBytes)
		for _, c := range []string{"a", "b", "a", "b", "c"} {
			j.Add(journal.Entry{ClientID: c})
		}
		before := j.Find(journal.Filter{})
		j.ClearClient("a")
		var want []journal.Entry
		for _, e := range before {
			if e.ClientID != "a" {
				want = append(want, e)
			}
		}
		got := j.Find(journal.Filter{})
		if len(got) != len(want) {
			t.Fatalf("size %d: %d entries left, want %d", size, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].ClientID != want[i].ClientID {
				t.Errorf("size %d: entry %d is %+v, want %+v", size, i, got[i], want[i])
			}
		}
		j.Add(journal.Entry{ClientID: "d"}) // the ring goes on after a partial clear
		if got := j.Find(journal.Filter{}); got[len(got)-1].ClientID != "d" || got[len(got)-1].ID != 6 {
			t.Errorf("size %d: entry after clear: %+v", size, got[len(got)-1])
		}
		var sum int64
		kept := j.Find(journal.Filter{})
		for _, e := range kept {
			sum += e.Size()
		}
		if n, bytes := j.Usage(); n != len(kept) || bytes != sum {
			t.Errorf("size %d: Usage says %d entries, %d bytes; they are %d, %d bytes", size, n, bytes, len(kept), sum)
		}
	}
}

// testConcurrentAddsKeepTheNewest: many requests journaling at once (which
// the Redis journal appends in batches, dropping the oldest in chunks)
// leave exactly the newest entries, numbered without gaps, within both
// bounds, and a read right after the Adds sees every one of them.

func testConcurrentAddsKeepTheNewest(t *testing.T, im impl) {
	for _, tc := range []bounds{
		{"count bound", 40, journal.MinMaxBytes},
		{"byte bound", 100000, journal.MinMaxBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := im.newLog(tc.maxEntries, tc.maxBytes)
			const writers, each = 16, 100
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					for i := range each {
						// Sizes vary, so the byte bound drops a varying number
						// of entries per Add.
						j.Add(journal.Entry{Path: "/p", ClientID: fmt.Sprint("c", w), RequestID: fmt.Sprint(w, "-", i),
							Headers: map[string]string{"X-Pad": strings.Repeat("x", (w*131+i*17)%journal.MaxValueBytes)}})
					}
				})
			}
			wg.Wait()
			all := j.Find(journal.Filter{})
			n, bytes := j.Usage()
			if n != len(all) || n == 0 || n > tc.maxEntries || bytes > tc.maxBytes {
				t.Fatalf("%d entries read, Usage %d entries %d bytes; bounds %d entries %d bytes", len(all), n, bytes, tc.maxEntries, tc.maxBytes)
			}
			var sum int64
			for i, e := range all {
				sum += e.Size()
				if want := uint64(writers*each - len(all) + i + 1); e.ID != want {
					t.Fatalf("entry %d of %d has id %d, want %d: not the newest, or not numbered in order", i, len(all), e.ID, want)
				}
			}
			if sum != bytes {
				t.Errorf("entries sum to %d bytes, Usage says %d", sum, bytes)
			}
			if tc.name == "count bound" && n != tc.maxEntries {
				t.Errorf("%d entries kept, want the count bound %d", n, tc.maxEntries)
			}
			if tc.name == "byte bound" && n == writers*each {
				t.Error("nothing was dropped: the test sent too little for the byte bound")
			}
		})
	}
}

// testKeepsTheNewestThatFit: however the entries are batched on their way
// in, the journal keeps the longest run of the newest entries within both
// bounds, as adding them one at a time and dropping the oldest for each
// would: never fewer, never more.
func testKeepsTheNewestThatFit(t *testing.T, im impl) {
	for _, tc := range []bounds{
		{"count bound", 7, journal.DefaultMaxBytes},
		{"byte bound", 100000, journal.MinMaxBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := im.newLog(tc.maxEntries, tc.maxBytes)
			const added = 400
			sizes := make([]int64, added)
			for i := range added {
				// Up to 60 headers of up to 1,000 bytes: within truncate's
				// bounds, so the size stored is the size computed here, and
				// up to a sixteenth of the byte budget.
				headers := map[string]string{}
				for h := range (i * 7) % 61 {
					headers[fmt.Sprintf("X-H-%02d", h)] = strings.Repeat("v", (i*131+h)%1000)
				}
				e := journal.Entry{Path: "/p", ClientID: fmt.Sprint("c", i%3), RequestID: fmt.Sprint(i), Headers: headers}
				sizes[i] = e.Size()
				j.Add(e)
			}
			keep, bytes := 1, sizes[added-1]
			for i := added - 2; i >= 0 && keep < tc.maxEntries && bytes+sizes[i] <= tc.maxBytes; i-- {
				keep, bytes = keep+1, bytes+sizes[i]
			}
			all := j.Find(journal.Filter{})
			if len(all) != keep || all[0].RequestID != fmt.Sprint(added-keep) || all[len(all)-1].RequestID != fmt.Sprint(added-1) {
				t.Fatalf("kept %d entries (%s to %s), want the newest %d that fit (%d to %d, %d bytes)",
					len(all), all[0].RequestID, all[len(all)-1].RequestID, keep, added-keep, added-1, bytes)
			}
			if n, b := j.Usage(); n != keep || b != bytes {
				t.Errorf("Usage: %d entries, %d bytes; want %d, %d", n, b, keep, bytes)
			}
			for c := range 3 {
				id := fmt.Sprint("c", c)
				var want int
				for i := added - keep; i < added; i++ {
					if i%3 == c {
						want++
					}
				}
				if got := j.Find(journal.Filter{ClientID: id}); len(got) != want {
					t.Errorf("client %s: %d entries, want %d", id, len(got), want)
				}
			}
		})
	}
}
