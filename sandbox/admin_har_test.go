package sandbox_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// har is the part of a HAR 1.2 archive the tests read.
type har struct {
	Log struct {
		Version string `json:"version"`
		Creator struct {
			Name string `json:"name"`
		} `json:"creator"`
		Entries []struct {
			StartedDateTime string `json:"startedDateTime"`
			Request         struct {
				Method  string    `json:"method"`
				URL     string    `json:"url"`
				Headers []harPair `json:"headers"`
				Query   []harPair `json:"queryString"`
			} `json:"request"`
			Response struct {
				Status  int       `json:"status"`
				Headers []harPair `json:"headers"`
			} `json:"response"`
			JournalID uint64 `json:"_journalId"`
			RequestID string `json:"_requestId"`
			ClientID  string `json:"_clientId"`
			RuleID    string `json:"_ruleId"`
		} `json:"entries"`
	} `json:"log"`
}

type harPair struct{ Name, Value string }

func pairs(ps []harPair) map[string]string {
	m := map[string]string{}
	for _, p := range ps {
		m[p.Name] = p.Value
	}
	return m
}

// getHAR fetches the archive for query (checked against the admin
// document) and decodes it.
func (s *testSandbox) getHAR(query url.Values) (har, *response) {
	s.t.Helper()
	path := sandbox.HARPath
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	r := s.admin(http.MethodGet, path, nil)
	if r.Status != http.StatusOK {
		s.t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var h har
	r.decode(s.t, &h)
	return h, r
}

// The HAR holds exactly the journal's entries for the same filters, with the
// same (redacted) headers: a token sent in a header or in the query, or a
// client secret, never shows.
func TestHARIsTheJournalAsAnArchive(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	s.do(request{path: trialsPath, token: token})
	s.do(request{path: trialsPath + "?access_token=" + token, invalid: true})
	s.do(request{path: trialsPath, token: token, headers: map[string]string{sandbox.ForceStatusHeader: "503"}})
	s.tokenResponse(partner2, partner2+"-secret", apiScope)

	filter := url.Values{"clientId": {partner}}
	h, r := s.getHAR(filter)
	journal := s.journal(filter)
	if h.Log.Version != "1.2" || h.Log.Creator.Name != "referrals-sandbox" {
		t.Errorf("log version %q creator %q", h.Log.Version, h.Log.Creator.Name)
	}
	if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, ".har") {
		t.Errorf("Content-Disposition %q, want an attachment named .har", cd)
	}
	if len(h.Log.Entries) != len(journal) || len(journal) < 3 {
		t.Fatalf("%d HAR entries, %d journal entries for the same filter (want at least 3)", len(h.Log.Entries), len(journal))
	}
	for i, e := range h.Log.Entries {
		j := journal[i]
		wantURL := s.URL + j.Path
		if j.Query != "" {
			wantURL += "?" + j.Query
		}
		if e.Request.Method != j.Method || e.Request.URL != wantURL || e.Response.Status != j.Status ||
			e.JournalID != j.ID || e.RequestID != j.RequestID || e.ClientID != partner {
			t.Errorf("entry %d: %s %s %d id %d request %s client %s; journal: %s %s %d id %d request %s",
				i, e.Request.Method, e.Request.URL, e.Response.Status, e.JournalID, e.RequestID, e.ClientID,
				j.Method, wantURL, j.Status, j.ID, j.RequestID)
		}
		if got := pairs(e.Request.Headers); !maps.Equal(got, j.Headers) {
			t.Errorf("entry %d headers %v, journal %v", i, got, j.Headers)
		}
		if got := pairs(e.Response.Headers)[sandbox.RequestIDHeader]; got != j.RequestID {
			t.Errorf("entry %d answer's %s %q, want %q", i, sandbox.RequestIDHeader, got, j.RequestID)
		}
	}
	for _, leaked := range []string{token, partner + "-secret", partner2 + "-secret"} {
		if strings.Contains(string(r.Body), leaked) {
			t.Errorf("the HAR holds a credential %.20s...", leaked)
		}
	}
	for _, e := range h.Log.Entries {
		if strings.Contains(e.Request.URL, "access_token=") && pairs(e.Request.Query)["access_token"] == token {
			t.Error("the query's token is in the HAR")
		}
	}

	forced, _ := s.getHAR(url.Values{"status": {"503"}})
	if len(forced.Log.Entries) != 1 || forced.Log.Entries[0].RuleID != sandbox.ForceStatusHeader ||
		pairs(forced.Log.Entries[0].Response.Headers)[sandbox.RuleHeader] != sandbox.ForceStatusHeader {
		t.Errorf("status=503: %+v, want the one forced answer with its rule", forced.Log.Entries)
	}
	latest, _ := s.getHAR(url.Values{"limit": {"1"}})
	if all := s.journal(url.Values{"limit": {"1"}}); len(latest.Log.Entries) != 1 || latest.Log.Entries[0].JournalID != all[0].ID {
		t.Errorf("limit=1: %d entries, want the newest journal entry", len(latest.Log.Entries))
	}
	bad := s.adminInvalid(http.MethodGet, sandbox.HARPath+"?status=abc", nil)
	if bad.Status != http.StatusBadRequest {
		t.Errorf("status=abc: %d, want 400", bad.Status)
	}
	if p := bad.problem(t); len(p.Errors) != 1 || p.Errors[0].Field != "status" {
		t.Errorf("status=abc: %+v, want an error naming status", p)
	}
}

// har-validator, the HAR 1.2 schema checker devtools' ecosystem uses,
// accepts a real archive with every kind of entry: issued and refused
// tokens, API answers, forced failures and a fault that closed the
// connection without an answer.
func TestHARPassesHARValidator(t *testing.T) {
	validate, err := filepath.Abs("../tools/har-validate/validate")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(validate), "node_modules", "har-validator")); err != nil {
		testutil.Missing(t, "HAR_VALIDATOR_REQUIRED", "har-validator is not installed (cd tools/har-validate && npm ci)")
	}
	node := testutil.Tool(t, "node", "HAR_VALIDATOR_REQUIRED", "apt-get install nodejs")
	s := newSandbox(t)
	token := s.token(partner)
	s.do(request{path: trialsPath, token: token})
	s.do(request{path: trialsPath + "?page=x%zz&a=b", token: token, invalid: true})
	s.do(request{path: trialsPath, token: token, headers: map[string]string{sandbox.ForceStatusHeader: "429"}})
	s.tokenResponse(partner, "wrong", apiScope)
	s.addRule(map[string]any{"endpoint": "api", "fault": "reset", "times": 1})
	if _, err := s.send(freshConnClient(t, 0), request{path: trialsPath, token: token, plain: true}); err == nil {
		t.Fatal("the reset rule answered")
	}
	_, r := s.getHAR(nil)
	file := filepath.Join(t.TempDir(), "requests.har")
	if err := os.WriteFile(file, r.Body, 0o600); err != nil {
		t.Fatal(err)
	}
	var h har
	if err := json.Unmarshal(r.Body, &h); err != nil || len(h.Log.Entries) < 5 {
		t.Fatalf("%d entries (%v), want at least 5", len(h.Log.Entries), err)
	}
	if out, err := exec.Command(node, validate, file).CombinedOutput(); err != nil {
		t.Fatalf("har-validator: %v\n%s\n%s", err, out, r.Body)
	}
}

// TestHARCarriesRateLimitHeaders: a 429 in the HAR carries the RateLimit-*
// headers its answer carried, as do the answers before it, so a throttling
// bug report shows the quota the client was told of.
func TestHARCarriesRateLimitHeaders(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withRateLimit(slowRate, 2))
	tok := s.token(partner)
	var last *response
	for range 3 {
		last = s.do(request{path: trialsPath, token: tok})
	}
	if last.Status != http.StatusTooManyRequests {
		t.Fatalf("third call: %d, want 429", last.Status)
	}
	h, _ := s.getHAR(url.Values{"clientId": {partner}, "status": {"429"}})
	if len(h.Log.Entries) != 1 {
		t.Fatalf("%d 429s in the HAR, want 1", len(h.Log.Entries))
	}
	got := pairs(h.Log.Entries[0].Response.Headers)
	for _, name := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After"} {
		if got[name] != last.Header.Get(name) || got[name] == "" {
			t.Errorf("the 429's %s in the HAR %q, the answer sent %q", name, got[name], last.Header.Get(name))
		}
	}
}
