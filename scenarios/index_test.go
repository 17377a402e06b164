package scenarios

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestIndexAgreesWithMatches: for random patterns and paths built from a
// few segments (literal, "*", empty), the index picks exactly the rules
// Rule.Matches picks, in order.
func TestIndexAgreesWithMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	segs := []string{"a", "b", "*", ""}
	randPath := func(wild bool) string {
		parts := make([]string, 1+rng.IntN(4))
		for i := range parts {
			s := segs[rng.IntN(len(segs))]
			if s == "*" && !wild {
				s = "c"
			}
			parts[i] = s
		}
		return "/" + strings.Join(parts, "/")
	}
	for round := range 200 {
		var entries []*entry
		for range 1 + rng.IntN(8) {
			r := Rule{Path: randPath(true), Status: 503}
			if rng.IntN(4) == 0 {
				r.Path = ""
			}
			if validatePath(r.Path) != nil {
				continue
			}
			entries = append(entries, newEntry(r, "", time.Time{}))
		}
		ix := newRuleIndex(entries)
		for range 20 {
			req := Request{Method: "GET", Path: randPath(false), Endpoint: EndpointAPI}
			var want []*entry
			for _, en := range entries {
				if en.rule.Matches(req) {
					want = append(want, en)
				}
			}
			got := ix.candidates(req)
			if len(got) != len(want) {
				t.Fatalf("round %d, path %q: index picks %d rules, Matches %d", round, req.Path, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("round %d, path %q: rule %d is %q, want %q", round, req.Path, i, got[i].rule.Path, want[i].rule.Path)
				}
			}
		}
	}
}
