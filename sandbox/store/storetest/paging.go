package storetest

import (
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// pagingRecords is the number of records the paging tests page through:
// limits 1, 7 and 21 divide it exactly (the last page is full, and must
// still end the listing), 2 and 22 do not.
const pagingRecords = 21

// seedPaging stores pagingRecords records for alice, inserted in an order
// unrelated to their timestamps, with timestamps chosen by atOf, plus
// records of neighbouring clients whose timestamps interleave with hers.
func seedPaging(t *testing.T, k kind, s store.Store, atOf func(i int) string) map[string]string {
	t.Helper()
	want := map[string]string{}
	for j := range pagingRecords {
		i := (j * 8) % pagingRecords // 8 and 21 are coprime: a permutation
		id := fmt.Sprintf("A-%02d", i)
		must(t, k.create(s, "alice", id, atOf(i)))
		want[id] = atOf(i)
	}
	for _, client := range []string{"alic", "alice2", "alicf", "bob"} {
		for i := range 5 {
			must(t, k.create(s, client, fmt.Sprintf("N-%d", i), atOf(i*4)))
		}
	}
	return want
}

func testListPaging(t *testing.T, s store.Store) {
	timestamps := []struct {
		name string
		atOf func(i int) string
	}{
		{"distinct", func(i int) string { return at(i) }},
		{"groups of three equal", func(i int) string { return at(i / 3) }},
		{"all equal", func(int) string { return at(7) }},
	}
	limits := []int{1, 2, 7, pagingRecords, pagingRecords + 1, 0, store.MaxLimit + 1}
	for _, k := range kinds() {
		for _, ts := range timestamps {
			t.Run(k.name+"/"+ts.name, func(t *testing.T) {
				// One store per case would be cleaner, but the suite gets
				// one store per subtest; distinct kinds use distinct key
				// spaces and cases are told apart by client.
				client := "alice"
				if err := s.Reset(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
				want := seedPaging(t, k, s, ts.atOf)
				reference, next, err := k.list(s, client, store.Page{Limit: store.MaxLimit})
				must(t, err)
				if next != "" {
					t.Errorf("a page holding everything returned cursor %q", next)
				}
				checkListing(t, reference, want)
				for _, limit := range limits {
					t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
						checkPages(t, k, s, client, limit, reference)
					})
				}
			})
		}
	}
}

// checkListing checks that got holds exactly the records of want
// (id -> submittedAt), each once, newest first.
func checkListing(t *testing.T, got []entry, want map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	for i, e := range got {
		if seen[e.id] {
			t.Errorf("record %s listed twice", e.id)
		}
		seen[e.id] = true
		if w, ok := want[e.id]; !ok || e.client != "alice" {
			t.Errorf("listed %+v, which is not alice's", e)
		} else if e.submittedAt != w {
			t.Errorf("record %s: submittedAt %s, want %s", e.id, e.submittedAt, w)
		}
		if i > 0 && got[i-1].submittedAt < e.submittedAt {
			t.Errorf("not newest first: %s (%s) before %s (%s)", got[i-1].id, got[i-1].submittedAt, e.id, e.submittedAt)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("listed %d distinct records, want %d", len(seen), len(want))
	}
}

// checkPages walks the listing page by page and compares it with reference,
// the same listing read in one page: same records, same order, pages full
// but the last, and no empty page at the end.
func checkPages(t *testing.T, k kind, s store.Store, client string, limit int, reference []entry) {
	t.Helper()
	size := limit
	switch {
	case limit == 0:
		size = store.DefaultLimit
	case limit > store.MaxLimit:
		size = store.MaxLimit
	}
	wantPages := (len(reference) + size - 1) / size
	var all []entry
	cursor := ""
	for page := 1; ; page++ {
		if page > wantPages {
			t.Fatalf("more than %d pages", wantPages)
		}
		got, next, err := k.list(s, client, store.Page{Limit: limit, Cursor: cursor})
		must(t, err)
		if page < wantPages && len(got) != size {
			t.Errorf("page %d holds %d records, want %d", page, len(got), size)
		}
		if len(got) == 0 {
			t.Errorf("page %d is empty", page)
		}
		all = append(all, got...)
		if next == "" {
			if page != wantPages {
				t.Errorf("listing ended after %d pages, want %d", page, wantPages)
			}
			break
		}
		cursor = next
	}
	if !reflect.DeepEqual(all, reference) {
		t.Errorf("pages of %d give\n%v\nwant (one page)\n%v", limit, all, reference)
	}
}

func testListEmpty(t *testing.T, s store.Store) {
	for _, k := range kinds() {
		must(t, k.create(s, "bob", "B-1", at(1)))
		got, next, err := k.list(s, "alice", store.Page{})
		must(t, err)
		if got == nil || len(got) != 0 || next != "" {
			t.Errorf("%s: empty listing = %v (nil: %t), cursor %q; want an empty slice and no cursor", k.name, got, got == nil, next)
		}
	}
}

// testListInsertBetweenPages: records created while a client pages through
// its listing are newer than the cursor, so the walk neither repeats nor
// skips the records it started with.
func testListInsertBetweenPages(t *testing.T, s store.Store) {
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			for i := range 6 {
				must(t, k.create(s, "alice", fmt.Sprintf("A-%d", i), at(i)))
			}
			first, cursor, err := k.list(s, "alice", store.Page{Limit: 2})
			must(t, err)
			must(t, k.create(s, "alice", "A-new", at(100)))
			must(t, k.create(s, "alice", "A-tie", first[len(first)-1].submittedAt))
			ids := map[string]int{}
			for _, e := range first {
				ids[e.id]++
			}
			for pages := 0; cursor != ""; pages++ {
				if pages > 10 {
					t.Fatal("the listing does not end")
				}
				var page []entry
				page, cursor, err = k.list(s, "alice", store.Page{Limit: 2, Cursor: cursor})
				must(t, err)
				for _, e := range page {
					ids[e.id]++
				}
			}
			for i := range 6 {
				if id := fmt.Sprintf("A-%d", i); ids[id] != 1 {
					t.Errorf("%s listed %d times, want once", id, ids[id])
				}
			}
			if ids["A-new"] != 0 {
				t.Error("a record newer than the cursor appeared on a later page")
			}
		})
	}
}

func testBadCursor(t *testing.T, s store.Store) {
	for _, k := range kinds() {
		for i := range 3 {
			must(t, k.create(s, "alice", fmt.Sprintf("A-%d", i), at(i)))
			must(t, k.create(s, "bob", fmt.Sprintf("B-%d", i), at(i)))
		}
	}
	cursorOf := func(k kind, client string) string {
		_, next, err := k.list(s, client, store.Page{Limit: 1})
		must(t, err)
		if next == "" {
			t.Fatalf("%s listing of %s returned no cursor", k.name, client)
		}
		return next
	}
	ks := kinds()
	for i, k := range ks {
		other := ks[1-i]
		aliceCursor := cursorOf(k, "alice")
		tests := []struct{ name, cursor string }{
			{"garbage", "not a cursor!"},
			{"base64 of text", base64.RawURLEncoding.EncodeToString([]byte("hello"))},
			{"base64 of an empty object", base64.RawURLEncoding.EncodeToString([]byte("{}"))},
			{"truncated", aliceCursor[:len(aliceCursor)-3]},
			{"extended", aliceCursor + "AAAA"},
			{"another client's", cursorOf(k, "bob")},
			{"the other listing's", cursorOf(other, "alice")},
		}
		for _, tc := range tests {
			_, _, err := k.list(s, "alice", store.Page{Limit: 1, Cursor: tc.cursor})
			wantErr(t, k.name+": "+tc.name+" cursor", err, store.ErrBadCursor)
		}
		if _, _, err := k.list(s, "alice", store.Page{Limit: 1, Cursor: aliceCursor}); err != nil {
			t.Errorf("%s: alice's own cursor rejected: %v", k.name, err)
		}
	}
}
