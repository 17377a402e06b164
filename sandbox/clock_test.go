package sandbox_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// clockState is the body of the clock endpoints.
type clockState struct {
	Now    string `json:"now"`
	Offset string `json:"offset"`
	Real   bool   `json:"real"`
}

// moveClock posts body to the clock and returns the new state.
func (s *testSandbox) moveClock(body any) clockState {
	s.t.Helper()
	r := s.admin(http.MethodPost, "/__sandbox/clock", body)
	if r.Status != http.StatusOK {
		s.t.Fatalf("move clock %v: %d %s", body, r.Status, r.Body)
	}
	var c clockState
	r.decode(s.t, &c)
	return c
}

// nowOf parses a clock state's time.
func nowOf(t *testing.T, c clockState) time.Time {
	t.Helper()
	at, err := time.Parse(referrals.TimestampLayout, c.Now)
	if err != nil {
		t.Fatalf("clock now %q: %v", c.Now, err)
	}
	return at
}

// near reports whether a and b are within a minute: wall time passes while
// the test runs, so clock readings are compared loosely.
func near(a, b time.Time) bool {
	d := a.Sub(b)
	return d > -time.Minute && d < time.Minute
}

// TestClockAdminAPI moves the clock forward, to a date and back to real
// time, and the API's own timestamps follow it.
func TestClockAdminAPI(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	var c clockState
	s.admin(http.MethodGet, "/__sandbox/clock", nil).decode(t, &c)
	if !c.Real || c.Offset != "0s" || !near(nowOf(t, c), time.Now()) {
		t.Errorf("initial clock %+v, want real time", c)
	}

	c = s.moveClock(map[string]any{"advance": "3600s"})
	if c.Real || c.Offset != "1h0m0s" || !near(nowOf(t, c), time.Now().Add(time.Hour)) {
		t.Errorf("after advancing 3600s: %+v", c)
	}
	c = s.moveClock(map[string]any{"advance": "30m"})
	if c.Offset != "1h30m0s" {
		t.Errorf("advances add up: offset %s, want 1h30m0s", c.Offset)
	}

	target := time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)
	c = s.moveClock(map[string]any{"set": target.Format(time.RFC3339)})
	if c.Real || !near(nowOf(t, c), target) {
		t.Errorf("after set %s: %+v", target, c)
	}
	tok := s.token(partner) // issued in 2030, valid in 2030
	var ping struct {
		Timestamp string `json:"timestamp"`
	}
	s.do(request{path: pingPath, token: tok}).decode(t, &ping)
	if !strings.HasPrefix(ping.Timestamp, "2030-01-02T15:0") || !strings.HasSuffix(ping.Timestamp, "+00:00") {
		t.Errorf("ping timestamp %q, want the sandbox time 2030-01-02T15:0x with +00:00", ping.Timestamp)
	}
	created := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: tok,
		body: map[string]any{"trialId": "TRIAL-CARDIO-001", "patient": validPatient()}})
	var ref struct {
		SubmittedAt string `json:"submittedAt"`
	}
	created.decode(t, &ref)
	if !strings.HasPrefix(ref.SubmittedAt, "2030-01-02T") {
		t.Errorf("referral submittedAt %q, want the sandbox date 2030-01-02", ref.SubmittedAt)
	}

	c = s.moveClock(map[string]any{"reset": true})
	if !c.Real || c.Offset != "0s" || !near(nowOf(t, c), time.Now()) {
		t.Errorf("after reset: %+v", c)
	}
}

// TestClockRefusesBadMoves: a move must say exactly one thing, well formed.
func TestClockRefusesBadMoves(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tests := []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"nothing", map[string]any{}, 422, "advance"},
		{"reset false", map[string]any{"reset": false}, 422, "advance"},
		{"two moves", map[string]any{"advance": "1h", "reset": true}, 422, "advance"},
		{"advance and set", map[string]any{"advance": "1h", "set": "2030-01-02T15:04:05Z"}, 422, "advance"},
		{"advance not a duration", map[string]any{"advance": "soon"}, 422, "advance"},
		{"advance bare number", map[string]any{"advance": "3600"}, 422, "advance"},
		{"set not a time", map[string]any{"set": "next tuesday"}, 422, "set"},
		{"set without zone", map[string]any{"set": "2030-01-02T15:04:05"}, 422, "set"},
		// A field given empty counts as given: it was once dropped, and the
		// other move made silently.
		{"advance and set empty", map[string]any{"advance": "1h", "set": ""}, 422, "advance"},
		{"set empty", map[string]any{"set": ""}, 422, "set"},
		{"advance empty", map[string]any{"advance": ""}, 422, "advance"},
		{"advance wrong type", map[string]any{"advance": 3600}, 400, ""},
		{"broken JSON", `{"advance":`, 400, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.as(t).adminInvalid(http.MethodPost, "/__sandbox/clock", tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d; body %s", r.Status, tc.status, r.Body)
			}
			p := r.problem(t)
			if tc.field != "" && (len(p.Errors) != 1 || p.Errors[0].Field != tc.field) {
				t.Errorf("errors %+v, want one naming %q", p.Errors, tc.field)
			}
		})
	}
	var c clockState
	s.admin(http.MethodGet, "/__sandbox/clock", nil).decode(t, &c)
	if !c.Real {
		t.Errorf("a refused move changed the clock: %+v", c)
	}
}

// TestClockAdvanceExpiresLiveToken: a token that works stops working once
// sandbox time passes its expiry, with a 401 saying so, journaled against
// the client.
func TestClockAdvanceExpiresLiveToken(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
		t.Fatalf("fresh token: %d %s", r.Status, r.Body)
	}
	s.advance(2 * time.Hour)
	r := s.do(request{path: trialsPath, token: tok})
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("after 2h: %d %s, want 401", r.Status, r.Body)
	}
	p := r.problem(t)
	challenge := r.Header.Get("WWW-Authenticate")
	if !strings.Contains(p.Detail, "expired") || !strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(challenge, "expired") {
		t.Errorf("detail %q challenge %q, want invalid_token saying expired", p.Detail, challenge)
	}
	if r.Header.Get("Sandbox-Rule") != "" {
		t.Errorf("a real expiry names a rule: %q", r.Header.Get("Sandbox-Rule"))
	}

	entries := s.journal(queryOf("path", trialsPath))
	if len(entries) != 2 {
		t.Fatalf("journal %+v, want the 200 and the 401", entries)
	}
	ok, expired := entries[0], entries[1]
	if expired.Status != http.StatusUnauthorized || expired.ClientID != partner || expired.TokenID == "" || expired.TokenID != ok.TokenID {
		t.Errorf("journal of the 401: %+v; want client %s and the token id %q of the earlier 200", expired, partner, ok.TokenID)
	}
	if expired.TokenExpiresAt == "" {
		t.Error("journal of the 401 lacks tokenExpiresAt")
	}

	// A token issued now works; the old one works again on real time.
	if r := s.do(request{path: trialsPath, token: s.token(partner)}); r.Status != http.StatusOK {
		t.Errorf("new token after the advance: %d", r.Status)
	}
	s.moveClock(map[string]any{"reset": true})
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
		t.Errorf("old token back on real time: %d", r.Status)
	}
}

// TestClockMovedBackKeepsIssuedTokens: docs/clients.md's recipe (advance, then
// reset) with a client that caches its token (x/oauth2's ReuseTokenSource,
// which judges expiry by its own clock): the token it fetched while the
// clock was ahead has an nbf in the reset clock's future, and the sandbox
// still accepts it because it issued it (idp/timing.go).
func TestClockMovedBackKeepsIssuedTokens(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	conf := clientcredentials.Config{
		ClientID: partner, ClientSecret: partner + "-secret",
		TokenURL: s.URL + tokenPath, Scopes: []string{apiScope},
	}
	ctx := context.WithValue(t.Context(), oauth2.HTTPClient, s.client)
	client := conf.Client(ctx)
	get := func(when string) {
		t.Helper()
		resp, err := client.Get(s.URL + trialsPath)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s, want 200", when, resp.StatusCode, body)
		}
	}
	s.advance(time.Hour)
	get("with the clock an hour ahead")
	s.moveClock(map[string]any{"reset": true})
	get("after the clock went back, with the cached token")

	if n := len(s.journal(queryOf("path", tokenPath))); n != 1 {
		t.Errorf("%d token requests, want the one the cache kept serving", n)
	}
}
