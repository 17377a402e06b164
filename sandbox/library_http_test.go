package sandbox_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// requiredScenarios are the named scenarios the sandbox promises.
var requiredScenarios = []string{
	"token-endpoint-down", "api-unavailable-then-recovers", "rate-limited", "token-expired",
	"permissions-revoked", "slow-network", "flaky", "connection-resets",
}

// libraryCase is an activated scenario under test: a fresh sandbox, tokens
// fetched before activation, and the ids of the activated rules.
type libraryCase struct {
	s          *testSandbox
	tok, tok2  string
	ruleIDs    []string
	activateIt func() []string
}

// scenarioChecks check that each library scenario does what its
// description says. A scenario file without a check here fails
// TestLibraryListsEveryScenario.
var scenarioChecks = map[string]func(t *testing.T, c libraryCase){
	"api-hangs": func(t *testing.T, c libraryCase) {
		_, err := c.s.send(freshConnClient(t, 300*time.Millisecond), request{path: trialsPath, token: c.tok})
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("first API call: %v, want a client timeout", err)
		}
		for i := range 2 {
			if r := c.s.do(request{path: trialsPath, token: c.tok}); r.Status != http.StatusOK {
				t.Errorf("call %d after the hang: %d, want 200", i+2, r.Status)
			}
		}
	},
	"api-unavailable-then-recovers": func(t *testing.T, c libraryCase) {
		for i := range 3 {
			checkForcedProblem(t, c.s.do(request{path: trialsPath, token: c.tok}), trialsPath,
				forced{status: 503, rule: c.ruleIDs[0], retryAfter: 1})
			if t.Failed() {
				t.Fatalf("call %d", i+1)
			}
		}
		for i := range 2 {
			if r := c.s.do(request{path: trialsPath, token: c.tok}); r.Status != http.StatusOK {
				t.Errorf("call %d: %d, want 200 (recovered)", i+4, r.Status)
			}
		}
	},
	"connection-resets": func(t *testing.T, c libraryCase) {
		first := resetSequence(t, c, 40)
		fails := strings.Count(first, "x")
		if fails < 3 || fails > 25 {
			t.Errorf("%d of 40 calls reset, want about 30%%: %s", fails, first)
		}
		// A reset reaches the client before its handler returns and
		// journals it: wait for the last one (at most 5 s).
		faults := 0
		testutil.Eventually(t, 5*time.Second, func() error {
			faults = 0
			for _, e := range c.s.journal(nil) {
				if e.Fault == "reset" {
					faults++
				}
			}
			if faults < fails {
				return fmt.Errorf("journal has %d reset faults, the client saw %d", faults, fails)
			}
			return nil
		})
		if faults != fails {
			t.Errorf("journal has %d reset faults, the client saw %d", faults, fails)
		}
		c.s.admin(http.MethodPost, "/__sandbox/reset", nil)
		c.activateIt()
		if again := resetSequence(t, c, 40); again != first {
			t.Errorf("not the same calls after a reset:\n%s\n%s", first, again)
		}
	},
	"flaky": func(t *testing.T, c libraryCase) {
		sequence := func() string {
			var b strings.Builder
			for range 200 {
				r := c.s.do(request{path: trialsPath, token: c.tok})
				switch {
				case r.Status == http.StatusOK:
					b.WriteByte('.')
				case r.Status == http.StatusServiceUnavailable && r.Header.Get("Retry-After") == "1":
					b.WriteByte('x')
				default:
					t.Fatalf("status %d Retry-After %q", r.Status, r.Header.Get("Retry-After"))
				}
			}
			return b.String()
		}
		first := sequence()
		if fails := strings.Count(first, "x"); fails < 8 || fails > 35 {
			t.Errorf("%d of 200 calls failed, want about 10%%", fails)
		}
		c.s.admin(http.MethodPost, "/__sandbox/reset", nil)
		c.activateIt()
		if again := sequence(); again != first {
			t.Errorf("not the same calls after a reset:\n%s\n%s", first, again)
		}
	},
	"invalid-client": func(t *testing.T, c libraryCase) {
		for _, id := range []string{partner, partner, partner2} {
			checkEntraError(t, c.s.postToken(tokenForm(id, id+"-secret", apiScope), nil), http.StatusUnauthorized, "invalid_client")
		}
		if r := c.s.do(request{path: trialsPath, token: c.tok}); r.Status != http.StatusOK {
			t.Errorf("API with a token issued before: %d, want 200", r.Status)
		}
	},
	"lost-answers": func(t *testing.T, c libraryCase) {
		write := func(tok string) request {
			return request{method: http.MethodPost, path: "/api/v1/referrals/", token: tok, body: referralBody("TRIAL-CARDIO-001")}
		}
		for _, client := range []string{c.tok, c.tok2} {
			e := c.s.lostWrite(write(client), "lost-"+client[len(client)-8:])
			if e.Fault != "drop-after-commit" || e.Status != http.StatusCreated {
				t.Errorf("first write: journal %q %d, want drop-after-commit of a 201", e.Fault, e.Status)
			}
			if r := c.s.do(write(client)); r.Status != http.StatusCreated {
				t.Errorf("second write: %d, want 201", r.Status)
			}
		}
		if r := c.s.do(request{path: trialsPath, token: c.tok}); r.Status != http.StatusOK {
			t.Errorf("read: %d, want 200 (only writes lose answers)", r.Status)
		}
	},
	"maintenance-window": func(t *testing.T, c libraryCase) {
		// An outage of the service: its ping is down with its API (a
		// client that checks the ping before retrying must see it), and
		// its identity provider, another system, stays up.
		wantForced(t, c.s.do(request{path: trialsPath, token: c.tok}), 503, "300")
		wantForced(t, c.s.do(request{path: pingPath, token: c.tok2}), 503, "300")
		accessTokenOf(t, c.s.postToken(tokenForm(partner, partner+"-secret", apiScope), nil))
		c.s.advance(29 * time.Minute)
		wantForced(t, c.s.do(request{path: trialsPath, token: c.tok2}), 503, "300")
		c.s.advance(time.Minute)
		wantForced(t, c.s.do(request{path: trialsPath, token: c.tok}), 200, "")
		wantForced(t, c.s.do(request{path: pingPath, token: c.tok2}), 200, "")
	},
	"outage-then-throttling": func(t *testing.T, c libraryCase) {
		wantForced(t, c.s.do(request{path: trialsPath, token: c.tok}), 503, "30")
		wantForced(t, c.s.do(request{path: pingPath, token: c.tok2}), 503, "30")
		c.s.advance(5 * time.Minute)
		wantForced(t, c.s.do(request{path: trialsPath, token: c.tok}), 429, "5")
		c.s.advance(2 * time.Minute)
		r := c.s.do(request{path: trialsPath, token: c.tok})
		if r.Status != http.StatusOK || r.Header.Get("Sandbox-Rule") != c.ruleIDs[0] {
			t.Errorf("slow phase: %d Sandbox-Rule %q, want a delayed 200 by %s", r.Status, r.Header.Get("Sandbox-Rule"), c.ruleIDs[0])
		}
		c.s.advance(10 * time.Minute)
		if r := c.s.do(request{path: trialsPath, token: c.tok}); r.Status != http.StatusOK || r.Header.Get("Sandbox-Rule") != "" {
			t.Errorf("recovered: %d Sandbox-Rule %q, want the normal answer", r.Status, r.Header.Get("Sandbox-Rule"))
		}
	},
	"token-endpoint-outage": func(t *testing.T, c libraryCase) {
		r := c.s.postToken(tokenForm(partner, partner+"-secret", apiScope), nil)
		checkEntraError(t, r, http.StatusServiceUnavailable, "temporarily_unavailable")
		checkForcedTokenHeaders(t, r, c.ruleIDs[0], http.StatusServiceUnavailable, 60)
		wantForced(t, c.s.do(request{path: trialsPath, token: c.tok}), 200, "")
		c.s.advance(15 * time.Minute)
		accessTokenOf(t, c.s.postToken(tokenForm(partner, partner+"-secret", apiScope), nil))
	},
	"brownout": func(t *testing.T, c libraryCase) {
		// The slow stretches (a median of 1.5 s a call) are counted at the
		// engine (scenarios' TestEmbeddedScenarios); here, the phases.
		listed := c.s.timelines()
		if len(listed) != 2 || listed[0].TimelineNow == nil || listed[1].TimelineNow == nil ||
			listed[0].TimelineNow.Phase != 0 || listed[1].TimelineNow.Phase != 0 {
			t.Fatalf("brownout rules %+v, want two timelines in their first phase", listed)
		}
		c.s.advance(20 * time.Minute)
		if r := c.s.do(request{path: trialsPath, token: c.tok}); r.Status != http.StatusOK || r.Header.Get("Sandbox-Rule") != "" {
			t.Errorf("lull: %d Sandbox-Rule %q, want the normal answer", r.Status, r.Header.Get("Sandbox-Rule"))
		}
		c.s.advance(15 * time.Minute)
		if r := c.s.do(request{path: trialsPath, token: c.tok}); r.Status != http.StatusOK || r.Header.Get("Sandbox-Rule") != "" {
			t.Errorf("recovered: %d Sandbox-Rule %q, want the normal answer", r.Status, r.Header.Get("Sandbox-Rule"))
		}
		if listed := c.s.timelines(); len(listed) != 0 {
			t.Errorf("after the brownout %+v are listed, want both timelines retired", listed)
		}
	},
	"malformed-response": func(t *testing.T, c libraryCase) {
		r, err := c.s.send(c.s.plain, request{path: trialsPath, token: c.tok})
		if err != nil || r.Status != http.StatusOK {
			t.Fatalf("first call: %v %+v", err, r)
		}
		var v any
		if json.Unmarshal(r.Body, &v) == nil || string(r.Body) != scenarios.MalformedBody {
			t.Errorf("first call body %q, want the truncated JSON", r.Body)
		}
		var trials struct {
			Trials []json.RawMessage `json:"trials"`
		}
		c.s.do(request{path: trialsPath, token: c.tok}).decode(t, &trials)
		if len(trials.Trials) == 0 {
			t.Error("second call: no trials")
		}
	},
	"permissions-revoked": func(t *testing.T, c libraryCase) {
		for _, tok := range []string{c.tok, c.tok, c.tok2} {
			checkForcedProblem(t, c.s.do(request{path: trialsPath, token: tok}), trialsPath, forced{status: 403, rule: c.ruleIDs[0]})
		}
		if r := c.s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: c.tok,
			body: map[string]any{"trialId": "TRIAL-CARDIO-001", "patient": validPatient()}}); r.Status != http.StatusForbidden {
			t.Errorf("write: %d, want 403", r.Status)
		}
		accessTokenOf(t, c.s.postToken(tokenForm(partner, partner+"-secret", apiScope), nil))
	},
	"rate-limited": func(t *testing.T, c libraryCase) {
		for i := range 20 {
			checkForcedProblem(t, c.s.do(request{path: trialsPath, token: c.tok}), trialsPath,
				forced{status: 429, rule: c.ruleIDs[0], retryAfter: 2})
			if t.Failed() {
				t.Fatalf("call %d", i+1)
			}
		}
		if r := c.s.do(request{path: trialsPath, token: c.tok}); r.Status != http.StatusOK {
			t.Errorf("call 21: %d, want 200 (limit lifted)", r.Status)
		}
	},
	"slow-network": func(t *testing.T, c libraryCase) {
		start := time.Now()
		for range 5 {
			if r := c.s.do(request{path: trialsPath, token: c.tok}); r.Status != http.StatusOK {
				t.Errorf("slow call: %d, want 200", r.Status)
			}
		}
		// Median 300ms each: five calls under 150ms in all would mean no
		// latency was added.
		if took := time.Since(start); took < 150*time.Millisecond {
			t.Errorf("5 calls took %s, want added latency", took)
		}
		accessTokenOf(t, c.s.postToken(tokenForm(partner, partner+"-secret", apiScope), nil))
		c.s.do(request{path: pingPath, token: c.tok})
		kinds := map[string]bool{}
		for _, e := range c.s.journal(nil) {
			if e.Scenario == "slow-network" {
				kinds[e.Endpoint] = true
			}
		}
		if !kinds["api"] || !kinds["token"] || !kinds["ping"] {
			t.Errorf("delayed endpoint kinds %v, want api, token and ping", kinds)
		}
	},
	"token-endpoint-down": func(t *testing.T, c libraryCase) {
		for _, id := range []string{partner, partner2} {
			r := c.s.postToken(tokenForm(id, id+"-secret", apiScope), nil)
			checkEntraError(t, r, http.StatusServiceUnavailable, "temporarily_unavailable")
			checkForcedTokenHeaders(t, r, c.ruleIDs[0], http.StatusServiceUnavailable, 5)
		}
		if r := c.s.do(request{path: trialsPath, token: c.tok}); r.Status != http.StatusOK {
			t.Errorf("API with a token issued before: %d, want 200", r.Status)
		}
	},
	"token-endpoint-throttled": func(t *testing.T, c libraryCase) {
		for range 3 {
			checkThrottled(t, c.s.postToken(tokenForm(partner, partner+"-secret", apiScope), nil), c.ruleIDs[0], 60)
		}
		accessTokenOf(t, c.s.postToken(tokenForm(partner, partner+"-secret", apiScope), nil))
		if r := c.s.do(request{path: trialsPath, token: c.tok}); r.Status != http.StatusOK {
			t.Errorf("API with a token issued before: %d, want 200", r.Status)
		}
	},
	"token-expired": func(t *testing.T, c libraryCase) {
		for _, client := range []struct{ id, tok string }{{partner, c.tok}, {partner2, c.tok2}} {
			r := c.s.do(request{path: trialsPath, token: client.tok})
			checkForcedProblem(t, r, trialsPath, forced{status: 401, rule: c.ruleIDs[0]})
			if d := r.problem(t).Detail; !strings.Contains(d, "expired") || !strings.Contains(r.Header.Get("WWW-Authenticate"), "expired") {
				t.Errorf("%s: detail %q challenge %q, want them to say expired", client.id, d, r.Header.Get("WWW-Authenticate"))
			}
			for i := range 2 {
				if r := c.s.do(request{path: trialsPath, token: client.tok}); r.Status != http.StatusOK {
					t.Errorf("%s call %d: %d, want 200", client.id, i+2, r.Status)
				}
			}
		}
	},
}

// resetSequence makes n API calls on fresh connections and returns "x" for
// each reset connection and "." for each 200.
func resetSequence(t *testing.T, c libraryCase, n int) string {
	t.Helper()
	client := freshConnClient(t, 5*time.Second)
	var b strings.Builder
	for range n {
		r, err := c.s.send(client, request{path: trialsPath, token: c.tok})
		switch {
		case err == nil && r.Status == http.StatusOK:
			b.WriteByte('.')
		case err != nil && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || strings.Contains(err.Error(), "connection reset")):
			b.WriteByte('x')
		default:
			t.Fatalf("call: %v %+v", err, r)
		}
	}
	return b.String()
}

// TestLibraryScenarios activates each named scenario over HTTP and checks it
// does what its description says.
func TestLibraryScenarios(t *testing.T) {
	t.Parallel()
	for name, check := range scenarioChecks {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			c := libraryCase{s: s, tok: s.token(partner), tok2: s.token(partner2)}
			c.activateIt = func() []string { return s.activate(name, "") }
			c.ruleIDs = c.activateIt()
			if len(c.ruleIDs) == 0 {
				t.Fatal("activation added no rules")
			}
			check(t, c)
		})
	}
}

// libraryEntry is a scenario as GET /__sandbox/library lists it.
type libraryEntry struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Rules       []json.RawMessage `json:"rules"`
}

// TestLibraryListsEveryScenario: the library lists the promised scenarios,
// each described, each readable by name, and each has a check above.
func TestLibraryListsEveryScenario(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	var lib struct {
		Scenarios []libraryEntry `json:"scenarios"`
	}
	s.admin(http.MethodGet, "/__sandbox/library", nil).decode(t, &lib)
	var names []string
	for _, sc := range lib.Scenarios {
		names = append(names, sc.Name)
		if strings.TrimSpace(sc.Description) == "" || len(sc.Rules) == 0 {
			t.Errorf("scenario %s: description %q, %d rules", sc.Name, sc.Description, len(sc.Rules))
		}
		if _, ok := scenarioChecks[sc.Name]; !ok {
			t.Errorf("scenario %s has no behaviour check in scenarioChecks", sc.Name)
		}
		var one libraryEntry
		s.admin(http.MethodGet, "/__sandbox/library/"+sc.Name, nil).decode(t, &one)
		if one.Name != sc.Name || one.Description != sc.Description {
			t.Errorf("GET %s: %+v", sc.Name, one)
		}
	}
	for _, want := range requiredScenarios {
		if !slices.Contains(names, want) {
			t.Errorf("library lacks %s; it has %v", want, names)
		}
	}
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		r := s.admin(method, "/__sandbox/library/no-such-scenario", nil)
		if r.Status != http.StatusNotFound {
			t.Errorf("%s unknown scenario: %d, want 404", method, r.Status)
			continue
		}
		if d := r.problem(t).Detail; !strings.Contains(d, "flaky") || !strings.Contains(d, "token-expired") {
			t.Errorf("%s unknown scenario: detail %q does not list the known names", method, d)
		}
	}
}

// TestLibraryActivations: activations are keyed by scenario and client;
// re-activating replaces, deactivating with clientId removes only that one.
func TestLibraryActivations(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok, tok2 := s.token(partner), s.token(partner2)
	r := s.admin(http.MethodPost, "/__sandbox/library/permissions-revoked", map[string]string{"clientId": partner2})
	if r.Status != http.StatusCreated {
		t.Fatalf("activate: %d %s", r.Status, r.Body)
	}
	var act struct {
		Scenario string `json:"scenario"`
		ClientID string `json:"clientId"`
		Rules    []struct {
			ID       string `json:"id"`
			Scenario string `json:"scenario"`
			ClientID string `json:"clientId"`
		} `json:"rules"`
	}
	r.decode(t, &act)
	if act.Scenario != "permissions-revoked" || act.ClientID != partner2 || len(act.Rules) != 1 ||
		act.Rules[0].ID == "" || act.Rules[0].Scenario != "permissions-revoked" || act.Rules[0].ClientID != partner2 {
		t.Errorf("activation %s", r.Body)
	}
	s.activate("permissions-revoked", partner2) // again: replaces, never doubles
	s.activate("permissions-revoked", partner)

	type listing struct {
		Rules []struct {
			ClientID string `json:"clientId"`
			Scenario string `json:"scenario"`
		} `json:"rules"`
		Active []struct {
			Name     string `json:"name"`
			ClientID string `json:"clientId"`
		} `json:"active"`
	}
	var l listing
	s.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &l)
	if len(l.Rules) != 2 || len(l.Active) != 2 {
		t.Fatalf("after three activations of two pairs: %+v", l)
	}
	for _, tok := range []string{tok, tok2} {
		if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusForbidden {
			t.Errorf("while active: %d, want 403", r.Status)
		}
	}

	if r := s.admin(http.MethodDelete, "/__sandbox/library/permissions-revoked?clientId="+partner2, nil); r.Status != http.StatusNoContent {
		t.Fatalf("deactivate for %s: %d %s", partner2, r.Status, r.Body)
	}
	if r := s.do(request{path: trialsPath, token: tok2}); r.Status != http.StatusOK {
		t.Errorf("%s after its deactivation: %d, want 200", partner2, r.Status)
	}
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusForbidden {
		t.Errorf("%s still bound: %d, want 403", partner, r.Status)
	}
	if r := s.admin(http.MethodDelete, "/__sandbox/library/permissions-revoked?clientId="+partner2, nil); r.Status != http.StatusNotFound {
		t.Errorf("deactivate twice: %d, want 404", r.Status)
	}
	if r := s.admin(http.MethodDelete, "/__sandbox/library/permissions-revoked", nil); r.Status != http.StatusNoContent {
		t.Errorf("deactivate all: %d", r.Status)
	}
	s.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &l)
	if len(l.Rules) != 0 || len(l.Active) != 0 {
		t.Errorf("after deactivating all: %+v", l)
	}
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
		t.Errorf("%s after deactivating all: %d", partner, r.Status)
	}
}

// TestScenarioHeaderAppliesToOneRequest: X-Sandbox-Scenario applies a named
// scenario to that request only, ignoring its counts, and changes nothing
// for the next request.
func TestScenarioHeaderAppliesToOneRequest(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	with := func(name string) map[string]string { return map[string]string{sandbox.ScenarioHeader: name} }

	checkForcedProblem(t, s.do(request{path: trialsPath, token: tok, headers: with("permissions-revoked")}), trialsPath,
		forced{status: 403, rule: "permissions-revoked.rules[0]"})
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
		t.Errorf("next request without the header: %d, want 200", r.Status)
	}
	// times: 3 is ignored: every request carrying the header fails.
	for range 5 {
		checkForcedProblem(t, s.do(request{path: trialsPath, token: tok, headers: with("api-unavailable-then-recovers")}), trialsPath,
			forced{status: 503, rule: "api-unavailable-then-recovers.rules[0]", retryAfter: 1})
	}
	// A scenario that concerns other endpoints leaves this one alone.
	if r := s.do(request{path: trialsPath, token: tok, headers: with("token-endpoint-down")}); r.Status != http.StatusOK {
		t.Errorf("token-endpoint-down on an API call: %d, want 200", r.Status)
	}
	r := s.postToken(tokenForm(partner, partner+"-secret", apiScope), with("token-endpoint-down"))
	checkEntraError(t, r, http.StatusServiceUnavailable, "temporarily_unavailable")
	// Probability is ignored too: connection-resets always resets.
	if _, err := s.send(freshConnClient(t, 5*time.Second), request{path: trialsPath, token: tok, headers: with("connection-resets")}); err == nil {
		t.Error("connection-resets by header: the client got an answer")
	}

	var l struct {
		Rules  []json.RawMessage `json:"rules"`
		Active []json.RawMessage `json:"active"`
	}
	s.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &l)
	if len(l.Rules) != 0 || len(l.Active) != 0 {
		t.Errorf("the header activated something: %+v", l)
	}
	forcedEntries := s.journal(queryOf("status", "503", "path", trialsPath))
	if len(forcedEntries) != 5 || forcedEntries[0].Scenario != "api-unavailable-then-recovers" {
		t.Errorf("journal of header-forced 503s: %+v", forcedEntries)
	}
}
