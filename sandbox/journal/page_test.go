package journal

import (
	"fmt"
	"testing"
)

// TestPagingWalksEveryEntryOnce: following nextAfterId (the last id of each
// page) visits every matching entry once, in order, and Latest gives the
// newest ones; Clear keeps ids counting up.
func TestPagingWalksEveryEntryOnce(t *testing.T) {
	forEachImpl(t, func(t *testing.T, im impl) {
		j := im.newLog(2000, DefaultMaxBytes)
		for i := range 1200 {
			j.Add(Entry{ClientID: fmt.Sprint("c", i%3), RequestID: fmt.Sprint(i)})
		}
		f := Filter{ClientID: "c1"}
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
		latest := j.Latest(Filter{ClientID: "c2"}, 2)
		if len(latest) != 2 || latest[0].RequestID != "1196" || latest[1].RequestID != "1199" {
			t.Errorf("Latest(c2, 2) = %+v", latest)
		}
		if got := j.Find(Filter{Limit: 1}); len(got) != 1 || got[0].ID != 1200 {
			t.Errorf("Find with limit 1 = %+v, want entry 1200", got)
		}
		j.Clear()
		j.Add(Entry{RequestID: "after"})
		if got := j.Find(Filter{}); len(got) != 1 || got[0].ID != 1201 {
			t.Errorf("after Clear: %+v, want one entry numbered 1201", got)
		}
	})
}
