package sandbox_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestJournalEntries checks what one entry records for token, API and forced
// requests, and that the sandbox's own endpoints stay out of it.
func TestJournalEntries(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tokResp := s.postToken(tokenForm(partner, partner+"-secret", apiScope), map[string]string{sandbox.RequestIDHeader: "qa-17.token"})
	tok := accessTokenOf(t, tokResp)
	api := s.do(request{path: trialsPath, token: tok, headers: map[string]string{sandbox.RequestIDHeader: "qa-17.trials"}})
	ruleID := s.addRule(map[string]any{"endpoint": "ping", "status": 503, "times": 1})
	ruleForced := s.do(request{path: pingPath, token: tok})
	headerForced := s.do(request{path: trialsPath, token: tok, headers: map[string]string{sandbox.ForceStatusHeader: "500"}})
	s.activate("permissions-revoked", partner)
	scenarioForced := s.do(request{path: trialsPath, token: tok})
	// None of these is journaled.
	s.admin(http.MethodGet, "/__sandbox/scenarios", nil)
	s.admin(http.MethodGet, "/__sandbox/clock", nil)
	s.do(request{path: "/__sandbox/health"})

	entries := s.journal(nil)
	if len(entries) != 5 {
		t.Fatalf("journal has %d entries, want 5: %+v", len(entries), entries)
	}
	for i, e := range entries {
		if strings.HasPrefix(e.Path, "/__sandbox/") {
			t.Errorf("entry %d journals the sandbox's own %s", i, e.Path)
		}
		if i > 0 && e.ID <= entries[i-1].ID {
			t.Errorf("entries not oldest first: id %d after %d", e.ID, entries[i-1].ID)
		}
		if e.At == "" || e.Method == "" || e.Headers == nil {
			t.Errorf("entry %d incomplete: %+v", i, e)
		}
	}
	tokenEntry, apiEntry := entries[0], entries[1]
	want := []struct {
		entry                             sandbox.JournalEntry
		method, path, endpoint, requestID string
		status                            int
		ruleID, scenario                  string
		retryAfter                        int
		resp                              *response
	}{
		{tokenEntry, "POST", tokenPath, "token", "qa-17.token", 200, "", "", 0, tokResp},
		{apiEntry, "GET", trialsPath, "api", "qa-17.trials", 200, "", "", 0, api},
		{entries[2], "GET", pingPath, "ping", "", 503, ruleID, "", 1, ruleForced},
		{entries[3], "GET", trialsPath, "api", "", 500, sandbox.ForceStatusHeader, "", 0, headerForced},
		{entries[4], "GET", trialsPath, "api", "", 403, "", "permissions-revoked", 0, scenarioForced},
	}
	for i, w := range want {
		e := w.entry
		if e.Method != w.method || e.Path != w.path || e.Endpoint != w.endpoint || e.Status != w.status || e.ClientID != partner {
			t.Errorf("entry %d: %s %s endpoint %q status %d client %q; want %s %s %q %d %s", i,
				e.Method, e.Path, e.Endpoint, e.Status, e.ClientID, w.method, w.path, w.endpoint, w.status, partner)
		}
		if e.RequestID != w.resp.Header.Get(sandbox.RequestIDHeader) || (w.requestID != "" && e.RequestID != w.requestID) {
			t.Errorf("entry %d requestId %q, response X-Request-Id %q, sent %q", i, e.RequestID, w.resp.Header.Get(sandbox.RequestIDHeader), w.requestID)
		}
		if e.TokenID == "" || e.TokenID != tokenEntry.TokenID {
			t.Errorf("entry %d tokenId %q, want the issued token's %q", i, e.TokenID, tokenEntry.TokenID)
		}
		if w.scenario != "" {
			if e.Scenario != w.scenario || e.RuleID == "" || e.RuleID != w.resp.Header.Get(sandbox.RuleHeader) {
				t.Errorf("entry %d scenario %q rule %q, want %q and the Sandbox-Rule %q", i, e.Scenario, e.RuleID, w.scenario, w.resp.Header.Get(sandbox.RuleHeader))
			}
		} else if e.RuleID != w.ruleID || e.Scenario != "" {
			t.Errorf("entry %d rule %q scenario %q, want rule %q", i, e.RuleID, e.Scenario, w.ruleID)
		}
		if e.RetryAfterSeconds != w.retryAfter {
			t.Errorf("entry %d retryAfterSeconds %d, want %d", i, e.RetryAfterSeconds, w.retryAfter)
		}
	}
	if got := apiEntry.Headers["Authorization"]; got != "[redacted]" {
		t.Errorf("API entry Authorization %q, want [redacted]", got)
	}
	if tokenEntry.Headers["Content-Type"] != formType {
		t.Errorf("token entry Content-Type %q: ordinary headers should be kept", tokenEntry.Headers["Content-Type"])
	}
}

// TestJournalFilters selects by client, path (exact and prefix), status,
// time and count.
func TestJournalFilters(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok1, tok2 := s.token(partner), s.token(partner2)
	s.do(request{path: trialsPath, token: tok1})
	s.do(request{path: trialsPath, token: tok2})
	s.do(request{path: pingPath, token: tok1})
	s.do(request{path: trialsPath})
	s.advance(10 * time.Minute)
	var c clockState
	s.admin(http.MethodGet, "/__sandbox/clock", nil).decode(t, &c)
	s.do(request{path: "/api/v1/referrals/", token: tok2})
	s.do(request{path: "/api/v1/referrals/qualified", token: tok1})

	all := s.journal(nil)
	if len(all) != 8 { // two token requests and six calls
		t.Fatalf("journal has %d entries, want 8", len(all))
	}
	paths := func(entries []sandbox.JournalEntry) []string {
		var out []string
		for _, e := range entries {
			out = append(out, fmt.Sprintf("%s %s %d", e.ClientID, e.Path, e.Status))
		}
		return out
	}
	tests := []struct {
		query url.Values
		want  []string
	}{
		{queryOf("clientId", partner2), []string{
			partner2 + " " + tokenPath + " 200", partner2 + " " + trialsPath + " 200", partner2 + " /api/v1/referrals/ 200"}},
		{queryOf("path", trialsPath), []string{
			partner + " " + trialsPath + " 200", partner2 + " " + trialsPath + " 200", " " + trialsPath + " 401"}},
		{queryOf("path", "/api/v1/referrals/*"), []string{
			partner + " " + trialsPath + " 200", partner2 + " " + trialsPath + " 200", " " + trialsPath + " 401",
			partner2 + " /api/v1/referrals/ 200", partner + " /api/v1/referrals/qualified 200"}},
		{queryOf("status", "401"), []string{" " + trialsPath + " 401"}},
		{queryOf("since", c.Now), []string{partner2 + " /api/v1/referrals/ 200", partner + " /api/v1/referrals/qualified 200"}},
		{queryOf("limit", "2"), []string{partner2 + " /api/v1/referrals/ 200", partner + " /api/v1/referrals/qualified 200"}},
		{queryOf("clientId", partner, "path", "/api/v1/*", "limit", "1"), []string{partner + " /api/v1/referrals/qualified 200"}},
		{queryOf("clientId", "nobody"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.query.Encode(), func(t *testing.T) {
			if got := paths(s.as(t).journal(tc.query)); !slices.Equal(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
	// An empty result is an empty list, not null.
	if r := s.admin(http.MethodGet, "/__sandbox/requests?clientId=nobody", nil); !strings.Contains(string(r.Body), `"requests":[]`) {
		t.Errorf("empty journal body %s", r.Body)
	}
}

// TestJournalRefusesBadQueries: bad filters are a 400 naming the parameter.
func TestJournalRefusesBadQueries(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for _, tc := range []struct{ query, field string }{
		{"status=abc", "status"},
		{"status=99", "status"},
		{"since=yesterday", "since"},
		{"limit=0", "limit"},
		{"limit=-3", "limit"},
		{"limit=all", "limit"},
		{"limit=1001", "limit"},
		{"afterId=-1", "afterId"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			r := s.as(t).adminInvalid(http.MethodGet, "/__sandbox/requests?"+tc.query, nil)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", r.Status)
			}
			if p := r.problem(t); len(p.Errors) != 1 || p.Errors[0].Field != tc.field {
				t.Errorf("errors %+v, want one naming %s", p.Errors, tc.field)
			}
		})
	}
}

// TestJournalBoundAndClear: the journal keeps the latest JournalSize
// requests; clearing it empties it without reusing ids.
func TestJournalBoundAndClear(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, func(c *sandboxConfig) { c.JournalSize = 5 })
	for i := 1; i <= 8; i++ {
		s.do(request{path: trialsPath, headers: map[string]string{sandbox.RequestIDHeader: fmt.Sprintf("req-%d", i)}})
	}
	var ids []string
	entries := s.journal(nil)
	for _, e := range entries {
		ids = append(ids, e.RequestID)
	}
	if want := []string{"req-4", "req-5", "req-6", "req-7", "req-8"}; !slices.Equal(ids, want) {
		t.Fatalf("journal %v, want %v", ids, want)
	}
	last := entries[len(entries)-1].ID
	if r := s.admin(http.MethodDelete, "/__sandbox/requests", nil); r.Status != http.StatusNoContent {
		t.Fatalf("clear: %d %s", r.Status, r.Body)
	}
	if got := s.journal(nil); len(got) != 0 {
		t.Fatalf("after clear: %+v", got)
	}
	s.do(request{path: trialsPath})
	got := s.journal(nil)
	if len(got) != 1 || got[0].ID <= last {
		t.Errorf("after clear and one request: %+v, want one entry with id above %d", got, last)
	}
}
