package journal

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentAddsKeepTheNewest: many requests journaling at once (which
// the Redis journal appends in batches, dropping the oldest in chunks)
// leave exactly the newest entries, numbered without gaps, within both
// bounds, and a read right after the Adds sees every one of them.
func TestConcurrentAddsKeepTheNewest(t *testing.T) {
	forEachImpl(t, testConcurrentAddsKeepTheNewest)
}

func testConcurrentAddsKeepTheNewest(t *testing.T, im impl) {
	for _, tc := range []struct {
		name       string
		maxEntries int
		maxBytes   int64
	}{
		{"count bound", 40, MinMaxBytes},
		{"byte bound", 100000, MinMaxBytes},
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
						j.Add(Entry{Path: "/p", ClientID: fmt.Sprint("c", w), RequestID: fmt.Sprint(w, "-", i),
							Headers: map[string]string{"X-Pad": strings.Repeat("x", (w*131+i*17)%MaxValueBytes)}})
					}
				})
			}
			wg.Wait()
			all := j.Find(Filter{})
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
