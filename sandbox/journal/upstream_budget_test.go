package journal_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// TestNoEntryExceedsMaxEntryBytes: an entry with every value at its bound
// and written six times over in JSON ('<'), request and upstream alike,
// is cut to MaxEntryBytes, so the smallest journal keeps two of them.
func TestNoEntryExceedsMaxEntryBytes(t *testing.T) {
	worst := strings.Repeat("<", 2*journal.MaxValueBytes)
	headers := func() map[string]string {
		h := map[string]string{}
		for i := range 2 * journal.MaxHeaders {
			h[fmt.Sprintf("X-%0*d", journal.MaxHeaderNameBytes-2, i)] = worst
		}
		return h
	}
	divergences := make([]string, 2*journal.MaxDivergences)
	for i := range divergences {
		divergences[i] = worst
	}
	body := []byte(`"` + strings.Repeat(`\u003c`, journal.MaxUpstreamBody/6) + `"`)
	e := journal.Entry{At: worst, Method: worst, Path: worst, Query: worst, Endpoint: worst, ClientID: worst, TokenID: worst,
		TokenExpiresAt: worst, Fault: worst, RuleID: worst, Scenario: worst, RequestID: worst, NamedClientID: worst, Headers: headers(),
		Upstream: &journal.Upstream{URL: worst, Headers: headers(), Body: body, RequestBody: body, BodyOmitted: worst, Error: worst, Divergences: divergences}}
	j := journal.NewBounded(10, journal.MinMaxBytes)
	for range 3 {
		if err := j.Add(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := j.Find(context.Background(), journal.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) < 2 {
		t.Fatalf("the smallest journal keeps %d of the largest entries, want at least 2", len(kept))
	}
	if size := kept[0].Size(); size > journal.MaxEntryBytes {
		t.Errorf("the largest entry's Size is %d, over MaxEntryBytes %d; truncated %v", size, journal.MaxEntryBytes, kept[0].Truncated)
	}
}
