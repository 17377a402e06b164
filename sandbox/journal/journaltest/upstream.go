package journaltest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// hostileDivergences is how many divergences the hostile entry carries:
// one per invalid item of an answer, as the recording proxy once wrote.
const hostileDivergences = 200_000

// hostileUpstreamEntry is the entry a hostile real service would make
// without the proxy's own caps: a divergence per invalid item, 9,006
// headers of 1 KB of '<' (six bytes each in JSON), and bodies over
// MaxUpstreamBody.
func hostileUpstreamEntry() journal.Entry {
	headers := make(map[string]string, 9006)
	for i := range 9006 {
		headers[fmt.Sprintf("X-Hostile-%05d", i)] = strings.Repeat("<", journal.MaxValueBytes)
	}
	divergences := make([]string, hostileDivergences)
	for i := range divergences {
		divergences[i] = fmt.Sprintf("the real service answered a number at /trials/%d of its 200 body; the document says value must be an object", i)
	}
	big := json.RawMessage("[" + strings.Repeat("1,", journal.MaxUpstreamBody) + "1]")
	return journal.Entry{Method: "GET", Path: "/api/v1/referrals/trials", RequestID: "hostile", Status: 200,
		Upstream: &journal.Upstream{URL: "https://real.example/api/v1/referrals/trials?" + strings.Repeat("<", 4*journal.MaxValueBytes),
			Status: 200, Headers: headers, Body: big, RequestBody: big, Divergences: divergences}}
}

// testHostileUpstreamStaysWithinEntryBound: an entry whose upstream part
// is as large as a hostile real service can make it is cut to
// MaxEntryBytes, keeps MaxDivergences divergences and a line saying how
// many more, keeps MaxHeaders upstream headers, and evicts nothing else
// from the smallest journal.
func testHostileUpstreamStaysWithinEntryBound(t *testing.T, im impl) {
	j := im.newLog(100, journal.MinMaxBytes)
	for i := range 3 {
		j.Add(journal.Entry{Method: "GET", Path: "/before", RequestID: fmt.Sprint(i)})
	}
	j.Add(hostileUpstreamEntry())
	j.Add(journal.Entry{Method: "GET", Path: "/after", RequestID: "after"})

	n, bytes := j.Usage()
	if n != 5 || bytes > journal.MinMaxBytes {
		t.Fatalf("the journal holds %d entries in %d bytes, want all 5 within %d", n, bytes, journal.MinMaxBytes)
	}
	var hostile *journal.Entry
	for _, e := range j.Find(journal.Filter{}) {
		if e.RequestID == "hostile" {
			hostile = &e
		}
	}
	if hostile == nil || hostile.Upstream == nil {
		t.Fatal("the hostile entry or its upstream part is missing")
	}
	if size := hostile.Size(); size > journal.MaxEntryBytes {
		t.Errorf("the entry's Size is %d, over MaxEntryBytes %d", size, journal.MaxEntryBytes)
	}
	raw, err := json.Marshal(hostile)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(raw)) > journal.MaxEntryBytes {
		t.Errorf("the entry's JSON is %d bytes, over MaxEntryBytes %d", len(raw), journal.MaxEntryBytes)
	}
	u := hostile.Upstream
	if len(u.Headers) > journal.MaxHeaders {
		t.Errorf("the entry keeps %d upstream headers, want at most %d", len(u.Headers), journal.MaxHeaders)
	}
	if d := u.Divergences; len(d) != journal.MaxDivergences+1 || d[len(d)-1] != journal.MoreDivergences(hostileDivergences-journal.MaxDivergences, false) {
		t.Errorf("the entry keeps %d divergences ending %q, want %d and %q", len(d), d[len(d)-1],
			journal.MaxDivergences+1, journal.MoreDivergences(hostileDivergences-journal.MaxDivergences, false))
	}
	for _, want := range []string{"upstream.url", "upstream.headers", "upstream.body", "upstream.requestBody", "upstream.divergences"} {
		if !slices.Contains(hostile.Truncated, want) {
			t.Errorf("truncated %v lacks %q", hostile.Truncated, want)
		}
	}
}

// testPagesAreBoundedInBytes: a page holds entries only while their sizes
// sum to MaxPageBytes (at least one entry), and following nextAfterId
// still walks every entry once.
func testPagesAreBoundedInBytes(t *testing.T, im impl) {
	j := im.newLog(100, 16*journal.MinMaxBytes)
	const sent = 8
	for i := range sent {
		e := hostileUpstreamEntry()
		e.RequestID = fmt.Sprint(i)
		j.Add(e)
	}
	var seen []string
	after := uint64(0)
	for pages := 0; ; pages++ {
		if pages > sent {
			t.Fatalf("the walk did not end after %d pages", pages)
		}
		page, more := j.After(journal.Filter{AfterID: after}, journal.MaxPageLimit)
		if len(page) == 0 {
			t.Fatalf("an empty page with more=%v", more)
		}
		var bytes int64
		for _, e := range page {
			bytes += e.Size()
			seen = append(seen, e.RequestID)
		}
		if len(page) > 1 && bytes > journal.MaxPageBytes {
			t.Fatalf("a page of %d entries holds %d bytes, over MaxPageBytes %d", len(page), bytes, journal.MaxPageBytes)
		}
		if !more {
			break
		}
		after = page[len(page)-1].ID
	}
	if len(seen) != sent {
		t.Errorf("the walk saw %v, want %d entries", seen, sent)
	}
	var bytes int64
	for _, e := range j.Latest(journal.Filter{}, journal.MaxPageLimit) {
		bytes += e.Size()
	}
	if bytes > journal.MaxPageBytes {
		t.Errorf("the latest page holds %d bytes, over MaxPageBytes %d", bytes, journal.MaxPageBytes)
	}
}
