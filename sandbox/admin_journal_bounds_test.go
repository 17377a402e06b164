package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// paddedHeaders is n headers of size bytes of pad each: what a hostile
// caller sends to make journal entries large.
func paddedHeaders(n, size int, pad string) map[string]string {
	h := map[string]string{}
	for i := range n {
		h[fmt.Sprintf("X-Pad-%03d", i)] = strings.Repeat(pad, size)
	}
	return h
}

// TestJournalTruncatesLongValues: a long path and a 64 KB header are kept
// cut to journal.MaxValueBytes, and the entry says what was cut; a normal
// request is kept whole and says nothing.
func TestJournalTruncatesLongValues(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	longPath := "/api/v1/referrals/" + strings.Repeat("é", 2000) // two bytes a rune: the cut must not split one
	s.do(request{path: longPath, invalid: true, unknownRoute: true, plain: true,
		headers: map[string]string{"X-Big": strings.Repeat("b", 64<<10), "X-Small": "kept"}})
	s.do(request{path: trialsPath, headers: map[string]string{"X-Small": "kept"}})

	entries := s.journal(nil)
	if len(entries) != 2 {
		t.Fatalf("journal has %d entries, want 2", len(entries))
	}
	big, small := entries[0], entries[1]
	if len(big.Path) > journal.MaxValueBytes || !strings.HasSuffix(big.Path, journal.TruncatedMark) ||
		!strings.HasPrefix(big.Path, "/api/v1/referrals/éé") {
		t.Errorf("long path kept as %d bytes ending %q, want at most %d ending in %q", len(big.Path), big.Path[max(0, len(big.Path)-8):], journal.MaxValueBytes, journal.TruncatedMark)
	}
	if !strings.HasSuffix(strings.TrimSuffix(big.Path, journal.TruncatedMark), "é") {
		t.Errorf("the cut split a character: path ends %q", big.Path[len(big.Path)-8:])
	}
	if v := big.Headers["X-Big"]; len(v) > journal.MaxValueBytes || !strings.HasPrefix(v, "bbbb") {
		t.Errorf("64 KB header kept as %d bytes, want at most %d", len(v), journal.MaxValueBytes)
	}
	if big.Headers["X-Small"] != "kept" {
		t.Errorf("short header of a truncated entry: %q", big.Headers["X-Small"])
	}
	if want := []string{"path", "headers.X-Big"}; !slices.Equal(big.Truncated, want) {
		t.Errorf("truncated %q, want %q", big.Truncated, want)
	}
	if small.Truncated != nil || small.Path != trialsPath {
		t.Errorf("normal request: path %q truncated %q, want it whole", small.Path, small.Truncated)
	}
	// The JSON says so too, and says nothing for a whole entry.
	raw := s.admin(http.MethodGet, "/__sandbox/requests", nil).Body
	if n := strings.Count(string(raw), `"truncated":`); n != 1 {
		t.Errorf("%d entries carry \"truncated\" in %s..., want 1", n, raw[:200])
	}
}

// TestJournalByteBudget: entries are dropped oldest first once the journal
// holds its byte budget, however few they are; too many headers are cut to
// journal.MaxHeaders and the entry says so.
func TestJournalByteBudget(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, func(c *sandboxConfig) { c.JournalBytes = sandbox.MinJournalBytes })
	const sent = 40
	for i := 1; i <= sent; i++ {
		h := paddedHeaders(journal.MaxHeaders+6, 2000, "p") // about 64 KB kept per entry
		h[sandbox.RequestIDHeader] = fmt.Sprintf("req-%d", i)
		s.do(request{path: trialsPath, headers: h})
	}
	entries := s.journal(nil)
	if len(entries) == 0 || len(entries) >= sent-1 {
		t.Fatalf("journal keeps %d of %d large entries; a 1 MiB budget holds about 15", len(entries), sent)
	}
	var kept []string
	for _, e := range entries {
		kept = append(kept, e.RequestID)
	}
	want := []string{}
	for i := sent - len(entries) + 1; i <= sent; i++ {
		want = append(want, fmt.Sprintf("req-%d", i))
	}
	if !slices.Equal(kept, want) {
		t.Errorf("kept %q, want the newest %q", kept, want)
	}
	body, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) > int(sandbox.MinJournalBytes) {
		t.Errorf("the kept entries are %d bytes of JSON, over the %d byte budget", len(body), sandbox.MinJournalBytes)
	}
	last := entries[len(entries)-1]
	if len(last.Headers) > journal.MaxHeaders || !slices.Contains(last.Truncated, "headers") || !slices.Contains(last.Truncated, "headers.X-Pad-000") {
		t.Errorf("entry with %d headers kept %d, truncated %q; want at most %d and \"headers\" listed", journal.MaxHeaders+7, len(last.Headers), last.Truncated, journal.MaxHeaders)
	}
	// A small request after the flood is journaled as usual.
	s.do(request{path: trialsPath, headers: map[string]string{sandbox.RequestIDHeader: "small"}})
	if got := s.journal(queryOf("limit", "1")); len(got) != 1 || got[0].RequestID != "small" || got[0].Truncated != nil {
		t.Errorf("after the flood, latest entry %+v", got)
	}
}

// TestJournalBudgetCountsJSON: the budget counts an entry as its JSON, so
// headers full of '<' (six bytes each in JSON) cannot make the journal's
// answer several times the budget.
func TestJournalBudgetCountsJSON(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, func(c *sandboxConfig) { c.JournalBytes = sandbox.MinJournalBytes })
	const sent = 20
	for range sent {
		s.do(request{path: trialsPath, headers: paddedHeaders(journal.MaxHeaders, 1000, "<")})
	}
	r := s.admin(http.MethodGet, "/__sandbox/requests?limit=1000", nil)
	var page requestsPage
	r.decode(t, &page)
	if n := len(page.Requests); n == 0 || n >= sent {
		t.Errorf("the journal keeps %d of %d entries of 384 KB of JSON each; a 1 MiB budget holds two", n, sent)
	}
	if len(r.Body) > int(sandbox.MinJournalBytes)+4096 {
		t.Errorf("the whole journal answers %d bytes, over its %d byte budget", len(r.Body), sandbox.MinJournalBytes)
	}
}

// requestsPage is one answer of GET /__sandbox/requests.
type requestsPage struct {
	Requests    []sandbox.JournalEntry `json:"requests"`
	NextAfterID *uint64                `json:"nextAfterId"`
}

func (s *testSandbox) requestsPage(query string) requestsPage {
	s.t.Helper()
	r := s.admin(http.MethodGet, "/__sandbox/requests?"+query, nil)
	if r.Status != http.StatusOK {
		s.t.Fatalf("requests?%s: %d %s", query, r.Status, r.Body)
	}
	var p requestsPage
	r.decode(s.t, &p)
	return p
}

// TestJournalPaging: an answer holds at most limit entries (default 100,
// at most 1000); without afterId the newest, with afterId a walk that
// nextAfterId continues to the end without repeating or skipping one.
func TestJournalPaging(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	const sent = 250
	for i := 1; i <= sent; i++ {
		s.do(request{path: trialsPath, headers: map[string]string{sandbox.RequestIDHeader: fmt.Sprintf("req-%d", i)}})
	}
	ids := func(entries []sandbox.JournalEntry) []string {
		var out []string
		for _, e := range entries {
			out = append(out, e.RequestID)
		}
		return out
	}
	want := func(from, to int) []string {
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprintf("req-%d", i))
		}
		return out
	}

	latest := s.requestsPage("")
	if got := ids(latest.Requests); !slices.Equal(got, want(sent-99, sent)) || latest.NextAfterID != nil {
		t.Errorf("default page: %d entries %v..., nextAfterId %v; want the newest 100 and none", len(got), got[:min(3, len(got))], latest.NextAfterID)
	}
	if got := ids(s.requestsPage("limit=1000").Requests); !slices.Equal(got, want(1, sent)) {
		t.Errorf("limit=1000: %d entries, want all %d", len(got), sent)
	}

	var walked []string
	pages := 0
	for after := uint64(0); ; pages++ {
		if pages > 5 {
			t.Fatal("the walk does not end")
		}
		p := s.requestsPage(fmt.Sprintf("afterId=%d&limit=100", after))
		walked = append(walked, ids(p.Requests)...)
		if p.NextAfterID == nil {
			break
		}
		if *p.NextAfterID != p.Requests[len(p.Requests)-1].ID {
			t.Errorf("nextAfterId %d, want the page's last id %d", *p.NextAfterID, p.Requests[len(p.Requests)-1].ID)
		}
		after = *p.NextAfterID
	}
	if pages != 2 || !slices.Equal(walked, want(1, sent)) {
		t.Errorf("walk took %d next links and gave %d entries; want 2 links and all %d in order", pages, len(walked), sent)
	}
	// A filter applies before the page is cut: afterId skips entries, limit
	// counts only matches.
	filtered := s.requestsPage("afterId=0&limit=2&status=401")
	if len(filtered.Requests) != 2 || filtered.NextAfterID == nil || filtered.Requests[0].RequestID != "req-1" {
		t.Errorf("filtered page %v next %v", ids(filtered.Requests), filtered.NextAfterID)
	}
	if empty := s.requestsPage(fmt.Sprintf("afterId=%d", latest.Requests[len(latest.Requests)-1].ID)); len(empty.Requests) != 0 || empty.NextAfterID != nil {
		t.Errorf("past the newest entry: %v next %v, want none", ids(empty.Requests), empty.NextAfterID)
	}
}
