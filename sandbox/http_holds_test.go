package sandbox_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// withHoldCaps sets the caps on held connections.
func withHoldCaps(total, perClient int) sandboxOption {
	return func(c *sandboxConfig) { c.MaxHeld, c.MaxHeldPerClient = total, perClient }
}

// hanger sends requests that hang (X-Sandbox-Scenario: api-hangs) and
// keeps them open until the test ends.
type hanger struct {
	t      *testing.T
	s      *testSandbox
	ctx    context.Context
	client *http.Client
	wg     sync.WaitGroup
}

func newHanger(t *testing.T, s *testSandbox) *hanger {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hanger{t: t, s: s, ctx: ctx, client: freshConnClient(t, 0)}
	t.Cleanup(func() { cancel(); h.wg.Wait() })
	return h
}

// hang starts one hanging trials call with token, waits until the sandbox
// holds want requests, and returns what makes this client give up.
func (h *hanger) hang(token string, want int) (giveUp func()) {
	h.t.Helper()
	ctx, cancel := context.WithCancel(h.ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.s.URL+trialsPath, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(sandbox.ScenarioHeader, "api-hangs")
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		if resp, err := h.client.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	h.waitHeld(want)
	return cancel
}

// waitHeld waits until the sandbox holds n requests.
func (h *hanger) waitHeld(n int) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for sandbox.HeldConnections(h.s.server) != n {
		if time.Now().After(deadline) {
			h.t.Fatalf("the sandbox holds %d requests, want %d", sandbox.HeldConnections(h.s.server), n)
		}
		time.Sleep(time.Millisecond) // polling the count: the signal itself
	}
}

// TestUnverifiedCallersHoldNothing: a caller the sandbox has not verified
// cannot make it hold a connection, with a hang or a delay, on the API, the
// ping or the token endpoint: the request gets its own refusal at once.
func TestUnverifiedCallersHoldNothing(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	client := freshConnClient(t, 20*time.Second) // a hang would hold until this gives up
	tokenPath := "/" + idp.DefaultTenant + "/oauth2/v2.0/token"
	badToken := strings.Repeat("x", 40)
	cases := []struct {
		name   string
		req    request
		status int
		shape  string
	}{
		{"api-hangs, no token", request{path: trialsPath, headers: map[string]string{sandbox.ScenarioHeader: "api-hangs"}}, http.StatusUnauthorized, sandbox.ProblemContentType},
		{"api-hangs, forged token", request{path: trialsPath, token: badToken, headers: map[string]string{sandbox.ScenarioHeader: "api-hangs"}}, http.StatusUnauthorized, sandbox.ProblemContentType},
		{"a 60 s delay on the ping, no token", request{path: "/health/ping", headers: map[string]string{sandbox.DelayHeader: "60s"}}, http.StatusUnauthorized, sandbox.ProblemContentType},
		{"a 60 s delay on the token endpoint, wrong secret", request{method: http.MethodPost, path: tokenPath,
			body:    "grant_type=client_credentials&client_id=" + partner + "&client_secret=wrong&scope=" + apiScope,
			headers: map[string]string{sandbox.DelayHeader: "60s", "Content-Type": "application/x-www-form-urlencoded"}}, http.StatusUnauthorized, "application/json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.plain = true
			r, err := s.send(client, c.req)
			if err != nil {
				t.Fatalf("the request was held until the client gave up: %v", err)
			}
			if r.Status != c.status || !strings.HasPrefix(r.Header.Get("Content-Type"), c.shape) {
				t.Errorf("%d %s, want %d %s: %s", r.Status, r.Header.Get("Content-Type"), c.status, c.shape, r.Body)
			}
		})
	}
	if n := sandbox.HeldConnections(s.server); n != 0 {
		t.Errorf("%d requests held after unverified callers", n)
	}
}

// TestHeldConnectionsCapped: a verified client holds at most its share of
// connections, all clients together at most the total; a request beyond a
// cap is refused at once with 503 and Retry-After in the endpoint's shape,
// while ordinary calls are served, and the room comes back when a held
// request ends.
func TestHeldConnectionsCapped(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withHoldCaps(3, 2))
	h := newHanger(t, s)
	tok, tok2, tok3 := s.token(partner), s.token(partner2), s.token(readonly)
	giveUp := h.hang(tok, 1)
	h.hang(tok, 2)

	refused := func(what string, req request) {
		t.Helper()
		req.plain = true
		r, err := s.send(freshConnClient(t, 20*time.Second), req)
		if err != nil {
			t.Fatalf("%s: held instead of refused: %v", what, err)
		}
		if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: %d (Retry-After %q), want 503 with Retry-After: %s", what, r.Status, r.Header.Get("Retry-After"), r.Body)
		}
	}
	hangReq := func(token string) request {
		return request{path: trialsPath, token: token, headers: map[string]string{sandbox.ScenarioHeader: "api-hangs"}}
	}
	refused("a third hang of one client", hangReq(tok))
	if p := s.do(request{path: trialsPath, token: tok, headers: map[string]string{sandbox.DelayHeader: "30s"}, plain: true}); p.Status != http.StatusServiceUnavailable {
		t.Errorf("a delay beyond the client's cap: %d, want 503", p.Status)
	} else if pr := p.problem(t); !strings.Contains(pr.Detail, "2") {
		t.Errorf("the refusal does not name the cap: %q", pr.Detail)
	}
	if r := s.trials(tok); r.Status != http.StatusOK {
		t.Errorf("an ordinary call of the client at its cap: %d, want 200", r.Status)
	}
	h.hang(tok2, 3)
	refused("a hang beyond the total", hangReq(tok3))
	tokenReq := request{method: http.MethodPost, path: "/" + idp.DefaultTenant + "/oauth2/v2.0/token",
		body:    "grant_type=client_credentials&client_id=" + readonly + "&client_secret=" + readonly + "-secret&scope=" + apiScope,
		headers: map[string]string{sandbox.DelayHeader: "30s", "Content-Type": "application/x-www-form-urlencoded"}}
	refused("a delayed token request beyond the total", tokenReq)
	if r := s.trials(tok3); r.Status != http.StatusOK {
		t.Errorf("an ordinary call at the total cap: %d, want 200", r.Status)
	}
	// A client giving up frees its room.
	giveUp()
	h.waitHeld(2)
	h.hang(tok3, 3)
}
