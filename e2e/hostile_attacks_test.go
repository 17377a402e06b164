package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// Sizes of the second round of hostile attacks (issue 28): the admin
// fields at their bounds, long request paths against those rules, a flood
// of refusals with 60 KB values, and connections held by hangs.
const (
	floodValueBytes = 60 << 10 // the client_id, path or Host of each refused request
	// maxLogLineBytes is what one log line about a refusal may take, its
	// request values cut included.
	maxLogLineBytes = 1 << 10
	// bigFieldsRSSBoundMB is the resident memory the sandbox stays under
	// with rules and runtime clients at their caps, every field at its
	// bound, and under the attacks that follow while they stay there
	// (docs/security.md, "Bounds on memory and work").
	bigFieldsRSSBoundMB = 256
)

// attackCounts is how many rules and runtime clients the big-field attack
// fills, how many refusals the log flood sends, and how many hangs the
// held-connection attack opens: a few seconds' worth by default, the caps
// and the sizes with HOSTILE_FULL=1.
func attackCounts() (rules, clients, refusals, hangs int) {
	if os.Getenv("HOSTILE_FULL") == "1" {
		return scenarios.DefaultMaxRules, idp.MaxRuntimeClients, 20000, 450
	}
	return 200, 100, 1500, 120
}

// partnerProbe is a partner calling the API in a loop during an attack,
// timing each call.
type partnerProbe struct {
	stop     context.CancelFunc
	done     chan struct{}
	times    []time.Duration
	failures []string
}

// probePartner starts a partner's loop of GET trials with token.
func probePartner(t *testing.T, base, token string) *partnerProbe {
	ctx, cancel := context.WithCancel(t.Context())
	pp := &partnerProbe{stop: cancel, done: make(chan struct{})}
	c := newClient(1)
	// A steady 200 calls a second, well inside the partner's rate limit.
	tick := time.NewTicker(5 * time.Millisecond)
	go func() {
		defer close(pp.done)
		defer tick.Stop()
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			start := time.Now()
			a, err := do(ctx, c, http.MethodGet, base+"/api/v1/referrals/trials", token, "", nil, nil)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				pp.failures = append(pp.failures, err.Error())
			case a.status != http.StatusOK:
				pp.failures = append(pp.failures, fmt.Sprintf("status %d: %.200s", a.status, a.body))
			default:
				pp.times = append(pp.times, time.Since(start))
			}
		}
	}()
	return pp
}

// finish stops the loop, logs the partner's p50 and p99 (measured, not
// asserted: timings depend on the machine) and fails the test if a call of
// the partner failed.
func (pp *partnerProbe) finish(t *testing.T, during string) {
	t.Helper()
	pp.stop()
	<-pp.done
	if len(pp.failures) > 0 {
		t.Errorf("%d of the partner's calls failed during %s; first: %s", len(pp.failures), during, pp.failures[0])
	}
	if len(pp.times) == 0 {
		t.Errorf("the partner made no call during %s", during)
		return
	}
	logPercentiles(t, "partner during "+during, pp.times)
}

// logPercentiles logs the p50 and p99 of times.
func logPercentiles(t *testing.T, what string, times []time.Duration) {
	t.Helper()
	slices.Sort(times)
	q := func(p float64) time.Duration { return times[min(len(times)-1, int(p*float64(len(times))))] }
	t.Logf("%s: %d calls, p50 %s, p99 %s", what, len(times), q(0.50).Round(10*time.Microsecond), q(0.99).Round(10*time.Microsecond))
}

// partnerBaseline times 200 of a partner's calls with no attack running, at
// the probe's pace, to compare the attacks' figures with.
func partnerBaseline(t *testing.T, base, token string) {
	t.Helper()
	c := newClient(1)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	times := make([]time.Duration, 0, 200)
	for range 200 {
		<-tick.C
		start := time.Now()
		a, err := do(t.Context(), c, http.MethodGet, base+"/api/v1/referrals/trials", token, "", nil, nil)
		if err != nil || a.status != http.StatusOK {
			t.Fatalf("a partner's call with no attack: %v, status %d", err, a.status)
		}
		times = append(times, time.Since(start))
	}
	logPercentiles(t, "partner with no attack", times)
}

// postJSON posts body to an admin path and returns the status and body.
func postJSON(t *testing.T, c *http.Client, u string, body any) answer {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	a, err := do(t.Context(), c, http.MethodPost, u, "", "application/json", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// bodySize fetches u and returns how many bytes its body has, however big.
func bodySize(t *testing.T, c *http.Client, u string) int64 {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", u, resp.StatusCode)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return n
}

// maximalRule is a rule with its description and path at their bounds:
// 2,048 bytes in 32 segments, 8 of them "*", ending in a segment no
// partner's path has, so it never fires for them but every request's path
// is walked against it. It names no client and no method, which would let
// the engine skip it before the path.
func maximalRule(i int) map[string]any {
	path := strings.Repeat("/*", scenarios.MaxPathWildcards) + strings.Repeat("/seg", scenarios.MaxPathSegments-scenarios.MaxPathWildcards-1) + fmt.Sprintf("/never-%04d-", i)
	path += strings.Repeat("p", scenarios.MaxPathBytes-len(path))
	return map[string]any{"endpoint": "api", "status": 503, "path": path, "description": strings.Repeat("d", scenarios.MaxDescriptionBytes)}
}

// maximalClient is a runtime client with every list and field at its
// bound; its first role and resource are real, so its token works.
func maximalClient() map[string]any {
	roles := []string{sandbox.RoleTrialsRead}
	for i := len(roles); i < idp.MaxClientRoles; i++ {
		roles = append(roles, fmt.Sprintf("%03d.%s", i, strings.Repeat("r", idp.MaxRoleBytes-4)))
	}
	resources := []string{"api://referrals-sandbox"}
	for i := len(resources); i < idp.MaxClientResources; i++ {
		resources = append(resources, fmt.Sprintf("api://%02d.%s", i, strings.Repeat("x", idp.MaxResourceBytes-9)))
	}
	return map[string]any{"roles": roles, "resources": resources, "description": strings.Repeat("d", idp.MaxClientDescriptionBytes), "ttl": "1h"}
}

// attackBigFields fills the rules and the runtime clients with every field
// at its bound, checks that a field over its bound is refused, and measures
// what the bounds allow: resident memory, the two listings and a token.
func attackBigFields(t *testing.T, p *sandboxProc, c *http.Client, partnerToken string) {
	rules, clients, _, _ := attackCounts()
	probe := probePartner(t, p.base, partnerToken)
	for i := range rules {
		if a := postJSON(t, c, p.base+"/__sandbox/scenarios", maximalRule(i)); a.status != http.StatusCreated {
			t.Fatalf("rule %d at its bounds: status %d %.300s", i, a.status, a.body)
		}
	}
	var secret, id string
	for i := range clients {
		a := postJSON(t, c, p.base+"/__sandbox/clients", maximalClient())
		if a.status != http.StatusCreated {
			t.Fatalf("client %d at its bounds: status %d %.300s", i, a.status, a.body)
		}
		var created struct{ ClientID, ClientSecret string }
		if err := json.Unmarshal(a.body, &created); err != nil {
			t.Fatal(err)
		}
		id, secret = created.ClientID, created.ClientSecret
	}
	probe.finish(t, fmt.Sprintf("the filling of %d rules and %d clients at their bounds", rules, clients))

	over := map[string]any{"endpoint": "api", "status": 503, "description": strings.Repeat("d", 1<<20-100)}
	if a := postJSON(t, c, p.base+"/__sandbox/scenarios", over); a.status != http.StatusUnprocessableEntity {
		t.Errorf("a rule with a 1 MB description: status %d, want 422", a.status)
	}
	bigClient := map[string]any{"roles": slices.Repeat([]string{strings.Repeat("r", 1000)}, 1000)}
	if a := postJSON(t, c, p.base+"/__sandbox/clients", bigClient); a.status != http.StatusUnprocessableEntity {
		t.Errorf("a client with 1,000 roles of 1 KB: status %d, want 422", a.status)
	}

	rulesBytes := bodySize(t, c, p.base+"/__sandbox/scenarios")
	clientsBytes := bodySize(t, c, p.base+"/__sandbox/clients")
	a, err := do(t.Context(), c, http.MethodPost, p.base+"/oauth2/v2.0/token", "", "application/x-www-form-urlencoded", tokenForm(id, secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	token, err := accessToken(a)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GET /__sandbox/scenarios with %d rules at their bounds: %d KB; GET /__sandbox/clients with %d clients at their bounds: %d KB; a token of a client at its bounds: %d bytes",
		rules, rulesBytes>>10, clients, clientsBytes>>10, len(token))
	// Byte bounds the field bounds imply (a rule lists in under 4 KB, a
	// client in under 16 KB), not timings.
	if rulesBytes > int64(rules)*4<<10+64<<10 || clientsBytes > int64(clients+10)*16<<10 || len(token) > 16<<10 {
		t.Errorf("listings of %d and %d bytes and a %d-byte token: over what the field bounds allow", rulesBytes, clientsBytes, len(token))
	}
	if a, err := do(t.Context(), c, http.MethodGet, p.base+"/api/v1/referrals/trials", token, "", nil, nil); err != nil || a.status != http.StatusOK {
		t.Errorf("the token of a client at its bounds: %v, status %d", err, a.status)
	}
	checkRSSUnder(t, p, fmt.Sprintf("with %d rules and %d clients at their bounds, after listing both", rules, clients), bigFieldsRSSBoundMB)
}

// attackLongPaths sends unauthenticated API requests with 60 KB paths of
// many segments, while the maximal rules of attackBigFields are active:
// each path is walked against every rule, for at most its 32 segments.
func attackLongPaths(t *testing.T, p *sandboxProc, c *http.Client, partnerToken string) {
	_, _, n, _ := attackCounts()
	n /= 4
	long := "/api/v1/referrals" + strings.Repeat("/a", 8) + strings.Repeat("/seg", scenarios.MaxPathSegments) + "/" + strings.Repeat("x/", floodValueBytes/2)
	probe := probePartner(t, p.base, partnerToken)
	statuses := flood(t, c, n, func(int) (*http.Request, error) {
		return http.NewRequestWithContext(t.Context(), http.MethodGet, p.base+long, nil)
	})
	probe.finish(t, fmt.Sprintf("%d unauthenticated %d KB paths against the active rules", n, len(long)>>10))
	for status, count := range statuses {
		if status != http.StatusUnauthorized && status != http.StatusNotFound && status != http.StatusTooManyRequests {
			t.Errorf("%d long-path requests answered %d", count, status)
		}
	}
	checkRSSUnder(t, p, "after the long paths (the rules and clients still at their bounds)", bigFieldsRSSBoundMB)
}

// attackLogFlood sends refusals with 60 KB values as fast as it can: token
// requests with a 60 KB client_id and admin requests with a 60 KB path and
// Host. The log may take one line of at most maxLogLineBytes a second per
// source and kind.
func attackLogFlood(t *testing.T, p *sandboxProc, c *http.Client, partnerToken string) {
	_, _, n, _ := attackCounts()
	big := strings.Repeat("x", floodValueBytes)
	form := []byte(url.Values{"grant_type": {"client_credentials"}, "client_id": {big}, "client_secret": {"s"}, "scope": {scope}}.Encode())
	before := len(p.stderr.String())
	start := time.Now()
	probe := probePartner(t, p.base, partnerToken)
	statuses := flood(t, c, n, func(i int) (*http.Request, error) {
		if i%2 == 0 {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, p.base+"/oauth2/v2.0/token", bytes.NewReader(form))
			if err == nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			return req, err
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, p.base+"/__sandbox/scenarios/"+big[:floodValueBytes/2], nil)
		if err == nil {
			req.Host = "evil-" + big[:floodValueBytes/2-100] + ".example"
		}
		return req, err
	})
	elapsed := time.Since(start)
	probe.finish(t, fmt.Sprintf("%d refusals with 60 KB values", n))
	if statuses[http.StatusUnauthorized]+statuses[http.StatusForbidden] != n {
		t.Errorf("statuses %v, want %d refused with 401 or 403", statuses, n)
	}
	logged := len(p.stderr.String()) - before
	// Two kinds from one source: two lines a second, plus the first ones.
	limit := (int(elapsed/time.Second) + 2) * 2 * maxLogLineBytes
	t.Logf("log written by %d refusals with 60 KB values in %s: %d bytes (at most %d)", n, elapsed.Round(time.Millisecond), logged, limit)
	if logged > limit {
		t.Errorf("%d refusals wrote %d bytes of log in %s; at most %d (one line of under 1 KB a second per caller and kind)", n, logged, elapsed, limit)
	}
	checkRSSUnder(t, p, "after the log flood", bigFieldsRSSBoundMB)
}

// attackHeldConnections opens hangs (X-Sandbox-Scenario: api-hangs): the
// unauthenticated ones must not be held at all, and a verified client's
// beyond its cap are refused with 503 at once.
func attackHeldConnections(t *testing.T, p *sandboxProc, partnerToken string) {
	_, _, _, n := attackCounts()
	probe := probePartner(t, p.base, partnerToken)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	hang := func(token string, timeout time.Duration) (int, error) {
		c := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/api/v1/referrals/trials", nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set(sandbox.ScenarioHeader, "api-hangs")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	// Unauthenticated: every one is answered, none held (the request
	// timeout would fail a held one).
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			status, err := hang("", requestTimeout)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				statuses[0]++
				return
			}
			statuses[status]++
		})
	}
	wg.Wait()
	if statuses[http.StatusUnauthorized]+statuses[http.StatusTooManyRequests] != n {
		t.Errorf("unauthenticated hangs: statuses %v, want all %d refused at once (401, or 429 from the shared unverified bucket)", statuses, n)
	}
	// A verified client: its first DefaultMaxHeldPerClient are held until
	// it gives up, the rest refused with 503.
	token := mustToken(t, newClient(1), p.base, partners[1].id, partners[1].secret)
	refused := make(chan int, n)
	for range n {
		wg.Go(func() {
			if status, err := hang(token, 0); err == nil { // held until cancel
				refused <- status
			}
		})
	}
	for i := range n - sandbox.DefaultMaxHeldPerClient {
		if status := <-refused; status != http.StatusServiceUnavailable {
			t.Errorf("hang %d beyond the client's cap: status %d, want 503", i, status)
		}
	}
	probe.finish(t, fmt.Sprintf("%d unauthenticated hangs and %d of one client", n, n))
	checkRSSUnder(t, p, "with a client's hangs held", bigFieldsRSSBoundMB)
	cancel()
	wg.Wait()
}
