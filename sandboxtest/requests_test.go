package sandboxtest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// TestRequestsFollowsPages: the journal answers at most
// journal.MaxPageLimit entries a call (Requests asks for fewer); Requests
// still returns every matching one, oldest first, and Limit still means
// the latest N.
func TestRequestsFollowsPages(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.Start(t)
	const sent = journal.MaxPageLimit + 5
	for range sent {
		if got := getTrials(t, sb, ""); got != http.StatusUnauthorized {
			t.Fatalf("trials without a token: %d, want 401", got)
		}
	}
	all := sb.Requests(t, sandboxtest.JournalFilter{Path: trialsPath})
	if len(all) != sent {
		t.Fatalf("Requests returned %d entries, want all %d", len(all), sent)
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID <= all[i-1].ID {
			t.Fatalf("entry %d has id %d after %d: not oldest first, or repeated", i, all[i].ID, all[i-1].ID)
		}
	}
	for _, limit := range []int{3, sent - 1} {
		latest := sb.Requests(t, sandboxtest.JournalFilter{Path: trialsPath, Limit: limit})
		if len(latest) != limit || latest[len(latest)-1].ID != all[len(all)-1].ID || latest[0].ID != all[sent-limit].ID {
			t.Errorf("Limit %d: %d entries, want the latest %d", limit, len(latest), limit)
		}
	}
}

// TestRequestsLimitSpansPagesCutByBytes: the journal cuts a page at
// journal.MaxPageBytes; Requests with a Limit still returns the latest
// Limit entries when they are large.
func TestRequestsLimitSpansPagesCutByBytes(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.Start(t)
	const sent = 8 // about 390 KB of JSON each: more than one page
	for range sent {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, sb.RootURL+trialsPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range journal.MaxHeaders {
			req.Header.Set(fmt.Sprintf("X-Pad-%02d", i), strings.Repeat("<", 1000))
		}
		resp, err := sb.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := sb.Requests(t, sandboxtest.JournalFilter{Path: trialsPath, Limit: sent}); len(got) != sent {
		t.Errorf("Limit %d returned %d entries", sent, len(got))
	}
}
