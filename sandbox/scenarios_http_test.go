package sandbox_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// apiCall is one call of an endpoint kind a failure can be forced on.
type apiCall struct {
	name     string
	endpoint string // rule endpoint kind
	method   string
	path     string
	body     any
}

// forcibleCalls are a read and a write of the API, and the ping.
func forcibleCalls() []apiCall {
	return []apiCall{
		{name: "api-get", endpoint: "api", method: http.MethodGet, path: trialsPath},
		{name: "api-post", endpoint: "api", method: http.MethodPost, path: "/api/v1/referrals/",
			body: map[string]any{"trialId": "TRIAL-CARDIO-001", "patient": validPatient()}},
		{name: "ping", endpoint: "ping", method: http.MethodGet, path: pingPath},
	}
}

// TestForcedStatusOnAPIAndPing forces each status the API and the ping can
// give, by a rule and by X-Sandbox-Force-Status, and checks the whole answer.
// The contract client also holds each answer to the OpenAPI document.
func TestForcedStatusOnAPIAndPing(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	for _, call := range forcibleCalls() {
		for _, status := range []int{401, 403, 429, 500, 503} {
			t.Run(fmt.Sprintf("%s/%d/rule", call.name, status), func(t *testing.T) {
				s := s.as(t)
				rule := map[string]any{"endpoint": call.endpoint, "path": call.path, "method": call.method, "status": status, "times": 1}
				want := forced{status: status}
				if status == 429 || status == 503 {
					rule["retryAfterSeconds"] = 7
					want.retryAfter = 7
				}
				want.rule = s.addRule(rule)
				r := s.do(request{method: call.method, path: call.path, token: tok, body: call.body})
				checkForcedProblem(t, r, call.path, want)
			})
			t.Run(fmt.Sprintf("%s/%d/header", call.name, status), func(t *testing.T) {
				s := s.as(t)
				want := forced{status: status, rule: sandbox.ForceStatusHeader}
				if status == 429 || status == 503 {
					want.retryAfter = 1 // the default
				}
				r := s.do(request{method: call.method, path: call.path, token: tok, body: call.body,
					headers: map[string]string{sandbox.ForceStatusHeader: strconv.Itoa(status)}})
				checkForcedProblem(t, r, call.path, want)
			})
		}
	}
	// Nothing forced stays behind: the times:1 rules retired and headers
	// only touch their own request.
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
		t.Errorf("after the forced calls: %d %s", r.Status, r.Body)
	}
}

// TestForcedTokenErrors forces each token endpoint failure, by a rule and by
// X-Sandbox-Force-Status, and checks the Entra error body and headers.
func TestForcedTokenErrors(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tests := []struct {
		value  string // header value
		rule   map[string]any
		status int
		code   string
	}{
		{"503", map[string]any{"status": 503, "retryAfterSeconds": 9}, 503, "temporarily_unavailable"},
		{"invalid_client", map[string]any{"error": "invalid_client"}, 401, "invalid_client"},
		{"invalid_scope", map[string]any{"error": "invalid_scope"}, 400, "invalid_scope"},
		{"invalid_grant", map[string]any{"error": "invalid_grant"}, 400, "invalid_grant"},
	}
	const correlation = "0b9d1d6e-6a34-4f7e-8c11-3c1f2b9e7a55"
	form := tokenForm(partner, partner+"-secret", apiScope)
	for _, tc := range tests {
		t.Run(tc.value+"/rule", func(t *testing.T) {
			s := s.as(t)
			rule := map[string]any{"endpoint": "token", "times": 1}
			for k, v := range tc.rule {
				rule[k] = v
			}
			id := s.addRule(rule)
			r := s.postToken(form, map[string]string{"client-request-id": correlation})
			checkEntraError(t, r, tc.status, tc.code)
			checkForcedTokenHeaders(t, r, id, tc.status, 9)
			var body struct {
				CorrelationID string `json:"correlation_id"`
			}
			r.decode(t, &body)
			if body.CorrelationID != correlation {
				t.Errorf("correlation_id %q, want the client-request-id %q", body.CorrelationID, correlation)
			}
		})
		t.Run(tc.value+"/header", func(t *testing.T) {
			s := s.as(t)
			r := s.postToken(form, map[string]string{sandbox.ForceStatusHeader: tc.value})
			checkEntraError(t, r, tc.status, tc.code)
			checkForcedTokenHeaders(t, r, sandbox.ForceStatusHeader, tc.status, 1)
		})
	}
	// The real credentials still work once nothing is forced.
	accessTokenOf(t, s.postToken(form, nil))
}

// TestForcedTokenThrottling forces Entra's throttling answer on the token
// endpoint by X-Sandbox-Force-Status, by a rule and by the named scenario:
// 429 with Retry-After and the plain "Too Many Requests" body Entra sends
// (AzureAD/microsoft-authentication-library-for-dotnet#2855). It failed
// before the token endpoint could be throttled: 429 was refused there.
func TestForcedTokenThrottling(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	form := tokenForm(partner, partner+"-secret", apiScope)
	t.Run("header", func(t *testing.T) {
		s := s.as(t)
		checkThrottled(t, s.postToken(form, map[string]string{sandbox.ForceStatusHeader: "429"}), sandbox.ForceStatusHeader, 1)
	})
	t.Run("rule", func(t *testing.T) {
		s := s.as(t)
		id := s.addRule(map[string]any{"endpoint": "token", "status": 429, "retryAfterSeconds": 7, "times": 1})
		checkThrottled(t, s.postToken(form, nil), id, 7)
		accessTokenOf(t, s.postToken(form, nil))
	})
	t.Run("named scenario", func(t *testing.T) {
		s := s.as(t)
		checkThrottled(t, s.postToken(form, map[string]string{sandbox.ScenarioHeader: "token-endpoint-throttled"}),
			"token-endpoint-throttled.rules[0]", 60)
	})
	t.Run("an API rate limit leaves the token endpoint alone", func(t *testing.T) {
		s := s.as(t)
		accessTokenOf(t, s.postToken(form, map[string]string{sandbox.ScenarioHeader: "rate-limited"}))
	})
}

// checkThrottled checks Entra's throttling answer on the token endpoint.
func checkThrottled(t *testing.T, r *response, rule string, retryAfter int) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests || string(r.Body) != "Too Many Requests" {
		t.Fatalf("%d %q, want 429 \"Too Many Requests\"", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want text/plain", ct)
	}
	checkForcedTokenHeaders(t, r, rule, http.StatusTooManyRequests, retryAfter)
}

// checkForcedTokenHeaders checks the headers of a forced token error.
func checkForcedTokenHeaders(t *testing.T, r *response, rule string, status, retryAfter int) {
	t.Helper()
	if got := r.Header.Get(sandbox.RuleHeader); got != rule {
		t.Errorf("%s %q, want %q", sandbox.RuleHeader, got, rule)
	}
	if !strings.Contains(r.Header.Get("Cache-Control"), "no-store") {
		t.Errorf("Cache-Control %q, want no-store", r.Header.Get("Cache-Control"))
	}
	want := ""
	if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
		want = strconv.Itoa(retryAfter)
	}
	if got := r.Header.Get("Retry-After"); got != want {
		t.Errorf("Retry-After %q, want %q", got, want)
	}
}

// TestForceHeaderRefusesUnknownValues: a typo in a switch header is a 400
// listing what is allowed, never a silently normal answer.
func TestForceHeaderRefusesUnknownValues(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	tests := []struct {
		name, path, header, value string
		token                     bool
		mentions                  []string
	}{
		{"api status", trialsPath, sandbox.ForceStatusHeader, "418", true, []string{"401", "403", "429", "500", "503"}},
		{"api token error", trialsPath, sandbox.ForceStatusHeader, "invalid_client", true, []string{"401", "503"}},
		{"ping status", pingPath, sandbox.ForceStatusHeader, "404", true, []string{"401", "429", "503"}},
		{"token status", tokenPath, sandbox.ForceStatusHeader, "401", false, []string{"503", "invalid_client", "invalid_grant", "invalid_scope"}},
		{"token unknown error", tokenPath, sandbox.ForceStatusHeader, "access_denied", false, []string{"invalid_client"}},
		{"delay word", trialsPath, sandbox.DelayHeader, "soon", true, []string{"250ms"}},
		{"delay negative", trialsPath, sandbox.DelayHeader, "-5ms", true, []string{"negative"}},
		{"delay too long", trialsPath, sandbox.DelayHeader, "61s", true, []string{"1m0s"}},
		{"scenario", trialsPath, sandbox.ScenarioHeader, "no-such-scenario", true, []string{"flaky", "token-expired"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := s.as(t)
			req := request{path: tc.path, headers: map[string]string{tc.header: tc.value}, plain: true}
			if tc.token {
				req.token = tok
			} else {
				req.method = http.MethodPost
				req.body = tokenForm(partner, partner+"-secret", apiScope).Encode()
				req.headers["Content-Type"] = formType
			}
			r := s.do(req)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400; body %s", r.Status, r.Body)
			}
			// The token endpoint refuses in Entra's shape, the API with a problem.
			var detail string
			if tc.token {
				detail = r.problem(t).Detail
			} else {
				checkEntraError(t, r, http.StatusBadRequest, "invalid_request")
				var body struct {
					Description string `json:"error_description"`
				}
				r.decode(t, &body)
				// Entra's trailer of ids and time is random: a trace id
				// may well hold "503" itself.
				detail, _, _ = strings.Cut(body.Description, "\r\nTrace ID:")
			}
			for _, m := range append([]string{tc.header}, tc.mentions...) {
				if !strings.Contains(detail, m) {
					t.Errorf("detail %q does not mention %q", detail, m)
				}
			}
			// Say it once: each part of the detail appears one time.
			for _, m := range tc.mentions {
				if n := strings.Count(detail, m); n != 1 {
					t.Errorf("detail %q repeats %q %d times", detail, m, n)
				}
			}
		})
	}
}

// TestRuleCountsExactUnderConcurrency sends 50 parallel requests against a
// counted rule: times and after hold exactly, however requests interleave.
func TestRuleCountsExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		rule   map[string]any
		forced int
	}{
		{"times 3", map[string]any{"times": 3}, 3},
		{"after 5", map[string]any{"after": 5}, 45},
		{"after 5 times 3", map[string]any{"after": 5, "times": 3}, 3},
		{"after 60", map[string]any{"after": 60}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			tok := s.token(partner)
			rule := map[string]any{"endpoint": "api", "status": 503}
			for k, v := range tc.rule {
				rule[k] = v
			}
			id := s.addRule(rule)
			const n = 50
			statuses := make([]int, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					r, err := s.send(nil, request{path: trialsPath, token: tok})
					if err != nil {
						t.Errorf("request %d: %v", i, err)
						return
					}
					statuses[i] = r.Status
				}()
			}
			close(start)
			wg.Wait()
			got := countStatuses(statuses)
			if got[503] != tc.forced || got[200] != n-tc.forced {
				t.Errorf("statuses %v, want %d×503 and %d×200", got, tc.forced, n-tc.forced)
			}
			// A rule with times retires once used up; the others show their tally.
			r := s.admin(http.MethodGet, "/__sandbox/scenarios/"+id, nil)
			if _, limited := tc.rule["times"]; limited {
				if r.Status != http.StatusNotFound {
					t.Errorf("used-up rule: %d %s, want 404 (retired)", r.Status, r.Body)
				}
				return
			}
			var st struct {
				Matches int `json:"matches"`
				Hits    int `json:"hits"`
			}
			r.decode(t, &st)
			if st.Matches != n || st.Hits != tc.forced {
				t.Errorf("rule tally matches %d hits %d, want %d and %d", st.Matches, st.Hits, n, tc.forced)
			}
		})
	}
}

// TestSeededProbabilityReplays: a seeded probability rule decides the same
// sequence after a reset, and it is a real mix of failures and successes.
func TestSeededProbabilityReplays(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	rule := map[string]any{"endpoint": "api", "status": 503, "probability": 0.5, "seed": 42}
	run := func(rule map[string]any) string {
		if r := s.admin(http.MethodPost, "/__sandbox/reset", nil); r.Status != http.StatusOK {
			t.Fatalf("reset: %d %s", r.Status, r.Body)
		}
		s.addRule(rule)
		var b strings.Builder
		for _, st := range s.statusSequence(tok, 40) {
			switch st {
			case http.StatusOK:
				b.WriteByte('.')
			case http.StatusServiceUnavailable:
				b.WriteByte('x')
			default:
				t.Fatalf("status %d in a 503/200 sequence", st)
			}
		}
		return b.String()
	}
	first := run(rule)
	second := run(rule)
	if first != second {
		t.Errorf("same seed, different sequences:\n%s\n%s", first, second)
	}
	if fails := strings.Count(first, "x"); fails < 5 || fails > 35 {
		t.Errorf("sequence %s: %d of 40 failed, want a mix around half", first, fails)
	}
	rule["seed"] = 43
	if other := run(rule); other == first {
		t.Errorf("seeds 42 and 43 gave the same sequence %s", first)
	}
}

// TestFaultsSeenByRealClient checks each connection fault the way a partner's
// HTTP client meets it, on every endpoint kind.
func TestFaultsSeenByRealClient(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	calls := []struct {
		name, endpoint string
		req            request
	}{
		{"api", "api", request{path: trialsPath, token: tok}},
		{"ping", "ping", request{path: pingPath, token: tok}},
		{"token", "token", request{method: http.MethodPost, path: tokenPath,
			body:    tokenForm(partner, partner+"-secret", apiScope).Encode(),
			headers: map[string]string{"Content-Type": formType}}},
	}
	for _, call := range calls {
		t.Run(call.name+"/reset", func(t *testing.T) {
			s := s.as(t)
			s.addRule(map[string]any{"endpoint": call.endpoint, "fault": "reset", "times": 1})
			_, err := s.send(freshConnClient(t, 5*time.Second), call.req)
			if err == nil {
				t.Fatal("reset fault: the client got an answer")
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("reset fault seen as a timeout: %v", err)
			}
			if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "connection reset") {
				t.Errorf("reset fault: %v, want ECONNRESET (or EOF)", err)
			}
		})
		t.Run(call.name+"/empty", func(t *testing.T) {
			s := s.as(t)
			s.addRule(map[string]any{"endpoint": call.endpoint, "fault": "empty", "times": 1})
			_, err := s.send(freshConnClient(t, 5*time.Second), call.req)
			if err == nil {
				t.Fatal("empty fault: the client got an answer")
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("empty fault: %v, want EOF", err)
			}
		})
		t.Run(call.name+"/hang", func(t *testing.T) {
			s := s.as(t)
			s.addRule(map[string]any{"endpoint": call.endpoint, "fault": "hang", "times": 1})
			const timeout = 300 * time.Millisecond
			start := time.Now()
			_, err := s.send(freshConnClient(t, timeout), call.req)
			var ne net.Error
			if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("hang fault: %v, want a client timeout", err)
			}
			if took := time.Since(start); took < timeout {
				t.Errorf("gave up after %s, before the %s timeout", took, timeout)
			}
		})
		t.Run(call.name+"/malformed", func(t *testing.T) {
			s := s.as(t)
			s.addRule(map[string]any{"endpoint": call.endpoint, "fault": "malformed", "times": 1})
			r, err := s.send(freshConnClient(t, 5*time.Second), call.req)
			if err != nil {
				t.Fatalf("malformed fault: %v, want a 200 with a broken body", err)
			}
			if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Errorf("malformed fault: %d %q", r.Status, r.Header.Get("Content-Type"))
			}
			var v any
			if err := json.Unmarshal(r.Body, &v); err == nil {
				t.Errorf("malformed body %q decodes as JSON", r.Body)
			}
			if string(r.Body) != scenarios.MalformedBody {
				t.Errorf("body %q, want %q", r.Body, scenarios.MalformedBody)
			}
		})
	}
	// Every fault is in the journal, hangs included once the server noticed
	// the client leaving.
	testutil.Eventually(t, 5*time.Second, func() error {
		faults := map[string]int{}
		for _, e := range s.journal(nil) {
			faults[e.Fault]++
		}
		for _, f := range []string{"reset", "empty", "hang", "malformed"} {
			if faults[f] != len(calls) {
				return fmt.Errorf("journal faults %v, want %d of each", faults, len(calls))
			}
		}
		return nil
	})
}

// TestDelays checks that added latency is at least what was asked for, and
// within a uniform delay's bounds.
func TestDelays(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	timed := func(t *testing.T, req request) (*response, time.Duration) {
		t.Helper()
		start := time.Now()
		r := s.as(t).do(req)
		return r, time.Since(start)
	}
	t.Run("fixed", func(t *testing.T) {
		s.as(t).addRule(map[string]any{"endpoint": "api", "delay": map[string]any{"fixed": "200ms"}, "times": 1})
		r, took := timed(t, request{path: trialsPath, token: tok})
		if r.Status != http.StatusOK || took < 200*time.Millisecond {
			t.Errorf("status %d after %s, want 200 after at least 200ms", r.Status, took)
		}
	})
	t.Run("uniform", func(t *testing.T) {
		id := s.as(t).addRule(map[string]any{"endpoint": "ping", "delay": map[string]any{"min": "100ms", "max": "300ms"}})
		var took []time.Duration
		for range 5 {
			r, d := timed(t, request{path: pingPath, token: tok})
			if r.Status != http.StatusOK || d < 100*time.Millisecond {
				t.Errorf("status %d after %s, want 200 after at least 100ms", r.Status, d)
			}
			took = append(took, d)
		}
		s.as(t).admin(http.MethodDelete, "/__sandbox/scenarios/"+id, nil)
		// The delay each answer drew is in the journal: it must lie within
		// the rule's bounds, and each answer took at least that long. The
		// wall-clock time alone has no upper bound on a loaded machine.
		var journal struct {
			Requests []sandbox.JournalEntry `json:"requests"`
		}
		s.as(t).admin(http.MethodGet, "/__sandbox/requests", nil).decode(t, &journal)
		var drawn []float64
		for _, e := range journal.Requests {
			if e.RuleID == id {
				drawn = append(drawn, e.DelayMs)
			}
		}
		if len(drawn) != len(took) {
			t.Fatalf("journal has %d requests under rule %s, want %d", len(drawn), id, len(took))
		}
		// Which answer drew which delay is not paired up; if each answer
		// took at least its own delay, the i-th shortest answer took at
		// least the i-th shortest delay.
		slices.Sort(drawn)
		slices.Sort(took)
		for i, ms := range drawn {
			if ms < 100 || ms > 300 {
				t.Errorf("an answer drew a %gms delay, want within [100ms, 300ms]", ms)
			}
			if d := time.Duration(ms * float64(time.Millisecond)); took[i] < d {
				t.Errorf("delays drawn %v, answers took %v: an answer came back before its delay ended", drawn, took)
				break
			}
		}
	})
	t.Run("delay with status", func(t *testing.T) {
		s.as(t).addRule(map[string]any{"endpoint": "token", "status": 503, "delay": map[string]any{"fixed": "150ms"}, "times": 1})
		start := time.Now()
		r := s.as(t).postToken(tokenForm(partner, partner+"-secret", apiScope), nil)
		if took := time.Since(start); took < 150*time.Millisecond {
			t.Errorf("forced 503 after %s, want at least 150ms", took)
		}
		checkEntraError(t, r, http.StatusServiceUnavailable, "temporarily_unavailable")
	})
	for _, v := range []string{"250ms", "250"} {
		t.Run("header "+v, func(t *testing.T) {
			r, took := timed(t, request{path: trialsPath, token: tok, headers: map[string]string{sandbox.DelayHeader: v}})
			if r.Status != http.StatusOK || took < 250*time.Millisecond {
				t.Errorf("status %d after %s, want 200 after at least 250ms", r.Status, took)
			}
			if got := r.Header.Get(sandbox.RuleHeader); got != sandbox.DelayHeader {
				t.Errorf("%s %q, want %q", sandbox.RuleHeader, got, sandbox.DelayHeader)
			}
		})
	}
	t.Run("client gives up during a delay", func(t *testing.T) {
		_, err := s.send(freshConnClient(t, 100*time.Millisecond), request{path: trialsPath, token: tok, headers: map[string]string{sandbox.DelayHeader: "5s"}})
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%v, want a client timeout", err)
		}
	})
}

// TestDelayHeaderKeepsActiveRules: X-Sandbox-Delay adds latency to a request;
// it must not switch off the failure rules QA activated for it.
func TestDelayHeaderKeepsActiveRules(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	id := s.addRule(map[string]any{"endpoint": "api", "status": 503, "times": 1})
	start := time.Now()
	r := s.do(request{path: trialsPath, token: tok, headers: map[string]string{sandbox.DelayHeader: "100ms"}})
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("answered after %s, want at least the 100ms asked for", took)
	}
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("with X-Sandbox-Delay and an active 503 rule: %d, want the rule's 503", r.Status)
	}
	if got := r.Header.Get(sandbox.RuleHeader); got != id {
		t.Errorf("%s %q, want the rule %q", sandbox.RuleHeader, got, id)
	}
}

// TestClientBoundRules: a rule or scenario bound to one client never touches
// another client's requests.
func TestClientBoundRules(t *testing.T) {
	t.Parallel()
	t.Run("rule", func(t *testing.T) {
		t.Parallel()
		s := newSandbox(t)
		tok1, tok2 := s.token(partner), s.token(partner2)
		s.addRule(map[string]any{"clientId": partner2, "status": 503})
		for range 3 {
			if r := s.do(request{path: trialsPath, token: tok1}); r.Status != http.StatusOK {
				t.Errorf("%s: %d, want 200", partner, r.Status)
			}
			if r := s.do(request{path: pingPath, token: tok2}); r.Status != http.StatusServiceUnavailable {
				t.Errorf("%s: %d, want 503", partner2, r.Status)
			}
		}
		// A token request names its client in the form: bound there too.
		checkEntraError(t, s.postToken(tokenForm(partner2, partner2+"-secret", apiScope), nil), 503, "temporarily_unavailable")
		accessTokenOf(t, s.postToken(tokenForm(partner, partner+"-secret", apiScope), nil))
	})
	t.Run("library scenario", func(t *testing.T) {
		t.Parallel()
		s := newSandbox(t)
		tok1, tok2 := s.token(partner), s.token(partner2)
		s.activate("api-unavailable-then-recovers", partner2)
		s.activate("token-endpoint-down", partner2)
		for i := range 4 {
			if r := s.do(request{path: trialsPath, token: tok1}); r.Status != http.StatusOK {
				t.Errorf("call %d of %s: %d, want 200", i, partner, r.Status)
			}
		}
		for i, want := range []int{503, 503, 503, 200} {
			if r := s.do(request{path: trialsPath, token: tok2}); r.Status != want {
				t.Errorf("call %d of %s: %d, want %d", i, partner2, r.Status, want)
			}
		}
		checkEntraError(t, s.postToken(tokenForm(partner2, partner2+"-secret", apiScope), nil), 503, "temporarily_unavailable")
		accessTokenOf(t, s.postToken(tokenForm(partner, partner+"-secret", apiScope), nil))
	})
}

// TestEndpointAnyRule: a rule for every endpoint forces its status only
// where the real endpoint can answer with it.
func TestEndpointAnyRule(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	s.addRule(map[string]any{"endpoint": "any", "status": 401})
	checkForcedProblem(t, s.do(request{path: trialsPath, token: tok}), trialsPath, forced{status: 401, rule: "rule-1"})
	checkForcedProblem(t, s.do(request{path: pingPath, token: tok}), pingPath, forced{status: 401, rule: "rule-1"})
	// The token endpoint has no 401 status of its own to force.
	accessTokenOf(t, s.postToken(tokenForm(partner, partner+"-secret", apiScope), nil))
	// Sandbox endpoints are never touched.
	if r := s.do(request{path: "/__sandbox/health"}); r.Status != http.StatusOK {
		t.Errorf("health: %d", r.Status)
	}
}

// TestRuleMatchers: method and path (with * segments) narrow a rule.
func TestRuleMatchers(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	fixture := firstReferral(t, partner)
	s.addRule(map[string]any{"method": "get", "path": "/api/v1/referrals/*/*", "status": 500})
	refPath := "/api/v1/referrals/" + fixture.TrialID + "/" + fixture.OutcomesID
	checkForcedProblem(t, s.do(request{path: refPath, token: tok}), refPath, forced{status: 500, rule: "rule-1"})
	for _, path := range []string{trialsPath, "/api/v1/referrals/", "/api/v1/referrals/qualified"} {
		if r := s.do(request{path: path, token: tok}); r.Status != http.StatusOK {
			t.Errorf("GET %s: %d, want 200 (the rule's path does not match)", path, r.Status)
		}
	}
}

// TestRulesAdminAPI covers adding, reading, listing and deleting rules.
func TestRulesAdminAPI(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	r := s.admin(http.MethodPost, "/__sandbox/scenarios", map[string]any{"id": "three-503s", "endpoint": "api", "status": 503, "times": 3, "description": "QA run 17"})
	if r.Status != http.StatusCreated {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	if loc := r.Header.Get("Location"); loc != "/__sandbox/scenarios/three-503s" {
		t.Errorf("Location %q", loc)
	}
	var added struct {
		ID          string `json:"id"`
		Remaining   *int   `json:"remaining"`
		Description string `json:"description"`
	}
	r.decode(t, &added)
	if added.ID != "three-503s" || added.Remaining == nil || *added.Remaining != 3 || added.Description != "QA run 17" {
		t.Errorf("added rule %s", r.Body)
	}
	if r := s.admin(http.MethodPost, "/__sandbox/scenarios", map[string]any{"id": "three-503s", "status": 500}); r.Status != http.StatusConflict {
		t.Errorf("duplicate id: %d %s, want 409", r.Status, r.Body)
	}
	second := s.addRule(map[string]any{"endpoint": "ping", "delay": map[string]any{"fixed": "1ms"}})
	s.do(request{path: trialsPath, token: tok}) // one hit of three-503s

	var list struct {
		Rules []struct {
			ID        string `json:"id"`
			Remaining *int   `json:"remaining"`
			Hits      int    `json:"hits"`
		} `json:"rules"`
	}
	s.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &list)
	if len(list.Rules) != 2 || list.Rules[0].ID != "three-503s" || list.Rules[1].ID != second {
		t.Fatalf("rules %+v, want three-503s then %s", list.Rules, second)
	}
	if rem := list.Rules[0].Remaining; rem == nil || *rem != 2 || list.Rules[0].Hits != 1 {
		t.Errorf("three-503s after one hit: remaining %v hits %d, want 2 and 1", rem, list.Rules[0].Hits)
	}
	if list.Rules[1].Remaining != nil {
		t.Errorf("unlimited rule has remaining %d", *list.Rules[1].Remaining)
	}
	if r := s.admin(http.MethodGet, "/__sandbox/scenarios/"+second, nil); r.Status != http.StatusOK {
		t.Errorf("get %s: %d", second, r.Status)
	}
	if r := s.admin(http.MethodDelete, "/__sandbox/scenarios/"+second, nil); r.Status != http.StatusNoContent {
		t.Errorf("delete %s: %d", second, r.Status)
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		if r := s.admin(method, "/__sandbox/scenarios/"+second, nil); r.Status != http.StatusNotFound {
			t.Errorf("%s deleted rule: %d, want 404", method, r.Status)
		} else {
			r.problem(t)
		}
	}
	if r := s.admin(http.MethodDelete, "/__sandbox/scenarios", nil); r.Status != http.StatusNoContent {
		t.Errorf("clear: %d", r.Status)
	}
	s.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &list)
	if len(list.Rules) != 0 {
		t.Errorf("after clear: %+v", list.Rules)
	}
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
		t.Errorf("after clear: %d, want 200", r.Status)
	}
}

// TestInvalidRulesNameTheField: every invalid rule is a 422 naming the field.
func TestInvalidRulesNameTheField(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tests := []struct {
		field string
		rule  map[string]any
	}{
		{"rule", map[string]any{"endpoint": "api"}},
		{"status", map[string]any{"status": 418}},
		{"status", map[string]any{"endpoint": "token", "status": 401}},
		{"error", map[string]any{"endpoint": "api", "error": "invalid_client"}},
		{"error", map[string]any{"endpoint": "token", "error": "access_denied"}},
		{"endpoint", map[string]any{"endpoint": "admin", "status": 503}},
		{"fault", map[string]any{"fault": "explode"}},
		{"fault", map[string]any{"fault": "reset", "status": 503}},
		{"path", map[string]any{"path": "/api/v1/referrals/TR*", "status": 503}},
		{"path", map[string]any{"path": "api/v1", "status": 503}},
		{"method", map[string]any{"method": "G E T", "status": 503}},
		{"probability", map[string]any{"status": 503, "probability": 1.5}},
		{"times", map[string]any{"status": 503, "times": -1}},
		{"after", map[string]any{"status": 503, "after": -2}},
		{"perClient", map[string]any{"status": 503, "perClient": true}},
		{"retryAfterSeconds", map[string]any{"status": 500, "retryAfterSeconds": 5}},
		{"retryAfterSeconds", map[string]any{"status": 503, "retryAfterSeconds": 7200}},
		{"reason", map[string]any{"delay": map[string]any{"fixed": "1ms"}, "reason": "expired"}},
		{"delay.max", map[string]any{"delay": map[string]any{"min": "1s"}}},
		{"delay.min", map[string]any{"delay": map[string]any{"min": "2s", "max": "1s"}}},
		{"delay.fixed", map[string]any{"delay": map[string]any{"fixed": "2m"}}},
		{"delay.median", map[string]any{"delay": map[string]any{"sigma": 0.5}}},
		{"id", map[string]any{"id": "has space", "status": 503}},
	}
	for _, tc := range tests {
		name, _ := json.Marshal(tc.rule)
		t.Run(string(name), func(t *testing.T) {
			r := s.as(t).adminInvalid(http.MethodPost, "/__sandbox/scenarios", tc.rule)
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422; body %s", r.Status, r.Body)
			}
			p := r.problem(t)
			if len(p.Errors) != 1 || p.Errors[0].Field != tc.field || p.Errors[0].Message == "" {
				t.Errorf("errors %+v, want one naming %q", p.Errors, tc.field)
			}
		})
	}
	var list struct {
		Rules []json.RawMessage `json:"rules"`
	}
	s.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &list)
	if len(list.Rules) != 0 {
		t.Errorf("invalid rules were added: %s", list.Rules)
	}
	// A body that is not JSON is a 400, not a rule.
	if r := s.adminInvalid(http.MethodPost, "/__sandbox/scenarios", `{"status":`); r.Status != http.StatusBadRequest {
		t.Errorf("broken JSON: %d, want 400", r.Status)
	}
}

// TestMisspeltRuleFieldIsNotIgnored: the library refuses unknown fields "so a
// misspelt probabilty cannot silently make a rule fire every time"; the admin
// API must not let the same typo through unnoticed either: it refuses it
// (422 naming the field) or at least warns (Sandbox-Warning naming it).
func TestMisspeltRuleFieldIsNotIgnored(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tests := []struct {
		path string
		body map[string]any
		typo string
	}{
		{"/__sandbox/scenarios", map[string]any{"endpoint": "api", "status": 503, "probabilty": 0.1}, "probabilty"},
		{"/__sandbox/library/flaky", map[string]any{"client": partner2}, "client"},
	}
	for _, tc := range tests {
		t.Run(tc.typo, func(t *testing.T) {
			r := s.as(t).adminInvalid(http.MethodPost, tc.path, tc.body)
			switch r.Status {
			case http.StatusUnprocessableEntity, http.StatusBadRequest:
				if p := r.problem(t); !strings.Contains(string(r.Body), tc.typo) {
					t.Errorf("refusal does not name %q: %+v", tc.typo, p)
				}
			case http.StatusCreated:
				if w := r.Header.Get(sandbox.WarningHeader); !strings.Contains(w, tc.typo) {
					t.Errorf("POST %s with unknown field %q: 201 without a %s naming it; the typo is silently ignored", tc.path, tc.typo, sandbox.WarningHeader)
				}
			default:
				t.Errorf("status %d %s", r.Status, r.Body)
			}
		})
	}
}

// firstReferral returns the first fixture referral of clientID whose status
// is received.
func firstReferral(t *testing.T, clientID string) fixtureReferral {
	t.Helper()
	for _, ref := range defaultFixtures(t).Referrals {
		if ref.ClientID == clientID && ref.Status == "received" {
			return fixtureReferral{TrialID: ref.TrialID, OutcomesID: ref.OutcomesID}
		}
	}
	t.Fatalf("no received referral of %s in the fixtures", clientID)
	return fixtureReferral{}
}

// fixtureReferral names one referral.
type fixtureReferral struct{ TrialID, OutcomesID string }

// queryOf builds url.Values from pairs.
func queryOf(pairs ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		q.Set(pairs[i], pairs[i+1])
	}
	return q
}

// TestForcedInvalidClientMatchesRealShape: a forced invalid_client must look
// like the real one, which carries no WWW-Authenticate even after HTTP
// Basic, as Entra's token endpoint (and the OpenAPI document) says.
func TestForcedInvalidClientMatchesRealShape(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {apiScope}}
	genuine := s.postToken(form, map[string]string{"Authorization": basic(partner, "wrong-secret")})
	checkEntraError(t, genuine, http.StatusUnauthorized, "invalid_client")
	if challenge := genuine.Header.Get("WWW-Authenticate"); challenge != "" {
		t.Fatalf("real invalid_client over Basic: WWW-Authenticate %q, want none", challenge)
	}
	forcedResp := s.postToken(form, map[string]string{"Authorization": basic(partner, partner+"-secret"), sandbox.ForceStatusHeader: "invalid_client"})
	checkEntraError(t, forcedResp, http.StatusUnauthorized, "invalid_client")
	if got, want := forcedResp.Header.Get("WWW-Authenticate"), genuine.Header.Get("WWW-Authenticate"); got != want {
		t.Errorf("forced invalid_client over Basic: WWW-Authenticate %q, want the real %q", got, want)
	}
}

// TestBadSwitchOnTokenEndpointIsDocumented: the 400 for a bad switch header
// on the token endpoint must be an answer the OpenAPI document allows there
// (the contract client checks it; the document's token 400 is a TokenError
// in application/json).
func TestBadSwitchOnTokenEndpointIsDocumented(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	r := s.do(request{method: http.MethodPost, path: tokenPath, body: tokenForm(partner, partner+"-secret", apiScope).Encode(),
		headers: map[string]string{"Content-Type": formType, sandbox.ForceStatusHeader: "401"}, invalid: true})
	if r.Status != http.StatusBadRequest {
		t.Errorf("status %d, want 400", r.Status)
	}
}
