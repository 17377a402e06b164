package sandbox_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// TestJournalPagesAreBoundedInBytes: however many entries limit allows, a
// page of GET /__sandbox/requests holds entries only up to
// journal.MaxPageBytes (at least one), with and without afterId, and
// nextAfterId walks every entry.
func TestJournalPagesAreBoundedInBytes(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	const sent = 8 // entries of about 390 KB of JSON each
	for range sent {
		s.do(request{path: trialsPath, headers: paddedHeaders(journal.MaxHeaders, 1000, "<")})
	}
	const envelope = 4096
	latest := s.admin(http.MethodGet, "/__sandbox/requests?limit=1000", nil)
	if len(latest.Body) > journal.MaxPageBytes+envelope {
		t.Errorf("the newest page is %d bytes, over %d", len(latest.Body), journal.MaxPageBytes)
	}
	seen := 0
	after := "0"
	for pages := 0; pages <= sent; pages++ {
		r := s.admin(http.MethodGet, "/__sandbox/requests?limit=1000&afterId="+after, nil)
		if len(r.Body) > journal.MaxPageBytes+envelope {
			t.Errorf("a page is %d bytes, over %d", len(r.Body), journal.MaxPageBytes)
		}
		var page requestsPage
		r.decode(t, &page)
		seen += len(page.Requests)
		if page.NextAfterID == nil {
			break
		}
		after = strconv.FormatUint(*page.NextAfterID, 10)
	}
	if seen != sent {
		t.Errorf("the walk saw %d entries, want %d", seen, sent)
	}
}
