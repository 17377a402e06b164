package sandbox_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/conformance"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// useRedis runs the sandbox in shared mode on rdb.
func useRedis(rdb *redis.Client) sandboxOption {
	return func(c *sandboxConfig) { c.Redis = rdb }
}

// replicas starts n sandboxes sharing one private Redis and one store, as n
// replicas behind a load balancer would.
func replicas(t *testing.T, n int, opts ...sandboxOption) []*testSandbox {
	t.Helper()
	return replicasOn(t, redistest.Start(t), n, opts...)
}

// replicasOn is replicas on a Redis the test controls.
func replicasOn(t *testing.T, srv *redistest.Server, n int, opts ...sandboxOption) []*testSandbox {
	t.Helper()
	st, err := store.Open(store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*testSandbox, n)
	for i := range out {
		out[i] = newSandbox(t, append([]sandboxOption{useRedis(srv.NewClient(t)), useStore(st)}, opts...)...)
	}
	return out
}

// balanced sends req with the Host of front, as a load balancer in front
// of the replicas would: tokens name the host they were issued for.
func balanced(front *testSandbox, req request) request {
	req.host = strings.TrimPrefix(front.URL, "http://")
	return req
}

// spread sends n GET /api/v1/referrals/trials in parallel, request i
// through replica i mod len(rs), and returns the statuses.
func spread(t *testing.T, rs []*testSandbox, n int, token func(i int) string) []int {
	t.Helper()
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := rs[i%len(rs)].send(nil, balanced(rs[0], request{method: http.MethodGet, path: "/api/v1/referrals/trials", token: token(i), plain: true}))
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			statuses[i] = resp.Status
		})
	}
	wg.Wait()
	return statuses
}

func TestSharedTimesRuleAcrossReplicas(t *testing.T) {
	rs := replicas(t, 3)
	rs[0].addRule(map[string]any{"endpoint": "api", "status": 503, "times": 3})
	tok := rs[0].token(partner)
	got := countStatuses(spread(t, rs, 60, func(int) string { return tok }))
	if got[503] != 3 || got[200] != 57 {
		t.Fatalf("statuses over three replicas: %v, want exactly 3 forced 503s and 57 200s", got)
	}
	for i, r := range rs {
		var list struct {
			Rules []any `json:"rules"`
		}
		r.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &list)
		if len(list.Rules) != 0 {
			t.Errorf("replica %d still lists the retired rule: %v", i, list.Rules)
		}
	}
}

func TestSharedPerClientAndAfterAcrossReplicas(t *testing.T) {
	rs := replicas(t, 3)
	rs[2].addRule(map[string]any{"endpoint": "api", "status": 429, "times": 2, "after": 4, "perClient": true})
	tokens := []string{rs[0].token(partner), rs[0].token(partner2)}
	statuses := spread(t, rs, 60, func(i int) string { return tokens[i%2] })
	forced := map[int]int{}
	for i, st := range statuses {
		if st == http.StatusTooManyRequests {
			forced[i%2]++
		}
	}
	if forced[0] != 2 || forced[1] != 2 {
		t.Fatalf("forced 429s per client: %v, want 2 each (after 4, times 2, per client)", forced)
	}
}

func TestSharedSeededProbabilityWhicheverReplica(t *testing.T) {
	rule := map[string]any{"id": "flaky", "endpoint": "api", "status": 503, "probability": 0.4, "seed": 7}
	sequence := func(rs []*testSandbox, pick func(i int) int) []int {
		rs[0].addRule(rule)
		tok := rs[0].token(partner)
		var out []int
		for i := range 40 {
			out = append(out, rs[pick(i)].do(balanced(rs[0], request{method: http.MethodGet, path: "/api/v1/referrals/trials", token: tok, plain: true})).Status)
		}
		return out
	}
	one := sequence([]*testSandbox{newSandbox(t)}, func(int) int { return 0 })
	three := sequence(replicas(t, 3), func(i int) int { return (i * i) % 3 })
	if fmt.Sprint(one) != fmt.Sprint(three) {
		t.Fatalf("a seeded rule answered differently over three replicas:\n one %v\nthree %v", one, three)
	}
	if c := countStatuses(one); c[503] == 0 || c[200] == 0 {
		t.Fatalf("probability 0.4 gave %v", c)
	}
}

func TestSharedJournalAndReportAcrossReplicas(t *testing.T) {
	rs := replicas(t, 3)
	tok := rs[1].token(partner)
	// Only B and C serve the token and API calls; A serves none of them.
	statuses := spread(t, rs[1:], 20, func(int) string { return tok })
	if c := countStatuses(statuses); c[200] != 20 {
		t.Fatalf("statuses %v", c)
	}
	entries := rs[0].journalOf(url.Values{"clientId": {partner}, "path": {"/api/v1/referrals/trials"}}, 20)
	if len(entries) != 20 {
		t.Fatalf("journal through A lists %d of the 20 calls made through B and C", len(entries))
	}
	for i := 1; i < len(entries); i++ {
		if entries[i].ID <= entries[i-1].ID {
			t.Fatalf("journal ids not increasing: %d then %d", entries[i-1].ID, entries[i].ID)
		}
	}
	var rep conformance.Report
	resp := rs[0].admin(http.MethodGet, "/__sandbox/report?clientId="+partner, nil)
	if resp.Status != http.StatusOK {
		t.Fatalf("report through A: %d %s", resp.Status, resp.Body)
	}
	resp.decode(t, &rep)
	if len(rep.Clients) != 1 || rep.Clients[0].Requests != 21 {
		t.Fatalf("report through A: %+v, want the token call and 20 API calls", rep.Clients)
	}
	// Clearing the journal through C clears it for A.
	rs[2].admin(http.MethodDelete, "/__sandbox/requests", nil)
	if got := rs[0].journal(url.Values{"clientId": {partner}}); len(got) != 0 {
		t.Errorf("after a clear through C, A lists %d entries", len(got))
	}
}

// TestSharedRuleCapAcrossReplicas: the cap on active rules counts the
// rules added through every replica, even when they arrive at once.
func TestSharedRuleCapAcrossReplicas(t *testing.T) {
	rs := replicas(t, 3, withMaxRules(5))
	statuses := make([]int, 12)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			resp, err := rs[i%3].send(nil, request{method: http.MethodPost, path: "/__sandbox/scenarios", body: map[string]any{"endpoint": "ping", "status": 503}})
			if err != nil {
				t.Errorf("add %d: %v", i, err)
				return
			}
			statuses[i] = resp.Status
		})
	}
	wg.Wait()
	if c := countStatuses(statuses); c[http.StatusCreated] != 5 || c[http.StatusUnprocessableEntity] != 7 {
		t.Fatalf("12 adds over three replicas with a cap of 5: %v, want 5 created and 7 refused", c)
	}
	var list struct {
		Rules []struct {
			ID string `json:"id"`
		} `json:"rules"`
	}
	rs[2].admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &list)
	ids := map[string]bool{}
	for _, r := range list.Rules {
		ids[r.ID] = true
	}
	if len(ids) != 5 {
		t.Errorf("replica C lists %v, want 5 distinct rules", ids)
	}
}

// TestSharedRulesRedisDown: while Redis is down, a request whose rules
// cannot be read answers 503 with Retry-After in the endpoint's own shape
// (never normally, which would skip a failure the tester asked for), and
// rules apply again once Redis is back.
func TestSharedRulesRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	rs := replicasOn(t, srv, 1)
	tok := rs[0].token(partner)
	srv.Stop(t)
	api := rs[0].do(request{method: http.MethodGet, path: "/api/v1/referrals/trials", token: tok, plain: true})
	wantProblem(t, api, http.StatusServiceUnavailable, "urn:referrals-sandbox:problem:unavailable")
	if api.Header.Get("Retry-After") == "" {
		t.Errorf("API 503 without Retry-After: %v", api.Header)
	}
	tokResp := rs[0].tokenResponse(partner, partner+"-secret", apiScope)
	if tokResp.Status != http.StatusServiceUnavailable || tokResp.Header.Get("Retry-After") == "" {
		t.Fatalf("token endpoint with Redis down: %d %v %s", tokResp.Status, tokResp.Header, tokResp.Body)
	}
	var entra struct {
		Error string `json:"error"`
	}
	tokResp.decode(t, &entra)
	if entra.Error == "" {
		t.Errorf("token endpoint 503 is not Entra-shaped: %s", tokResp.Body)
	}
	add := rs[0].do(request{method: http.MethodPost, path: "/__sandbox/scenarios", body: map[string]any{"status": 500}, invalid: true})
	wantProblem(t, add, http.StatusServiceUnavailable, "urn:referrals-sandbox:problem:unavailable")
	if add.Header.Get("Retry-After") == "" {
		t.Errorf("rule refused with Redis down, without Retry-After: %v", add.Header)
	}
	// What no shared state changes is still served: clients can fetch
	// the signing keys and discovery documents while Redis is away.
	for _, path := range []string{"/" + idp.DefaultTenant + "/discovery/v2.0/keys", "/" + idp.DefaultTenant + "/v2.0/.well-known/openid-configuration", "/api/v1/openapi.json", "/__sandbox/openapi.json"} {
		if r := rs[0].do(request{path: path, plain: true}); r.Status != http.StatusOK {
			t.Errorf("GET %s with Redis down: %d, want 200", path, r.Status)
		}
	}
	for _, body := range []map[string]any{{}, {"clientId": partner}} {
		r := rs[0].do(request{method: http.MethodPost, path: "/__sandbox/reset", body: body, invalid: true})
		wantProblem(t, r, http.StatusServiceUnavailable, "urn:referrals-sandbox:problem:unavailable")
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("reset %v with Redis down, without Retry-After", body)
		}
	}
	for _, path := range []string{"/__sandbox/scenarios", "/__sandbox/requests", "/__sandbox/report", "/__sandbox/scenarios/rule-1"} {
		r := rs[0].admin(http.MethodGet, path, nil)
		wantProblem(t, r, http.StatusServiceUnavailable, "urn:referrals-sandbox:problem:unavailable")
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("GET %s with Redis down, without Retry-After", path)
		}
	}
	srv.Restart(t)
	// go-redis notices a returned server on its own schedule (it backs off
	// after failed dials): poll, with a bound far above any machine's pace.
	testutil.Eventually(t, 30*time.Second, func() error {
		if last := rs[0].do(request{method: http.MethodGet, path: "/api/v1/referrals/trials", token: tok, plain: true}); last.Status != http.StatusOK {
			return fmt.Errorf("after Redis returned: %d %s", last.Status, last.Body)
		}
		return nil
	})
	rs[0].addRule(map[string]any{"endpoint": "api", "status": 500, "times": 1})
	if r := rs[0].do(request{method: http.MethodGet, path: "/api/v1/referrals/trials", token: tok, plain: true}); r.Status != http.StatusInternalServerError {
		t.Errorf("rule added after recovery: %d", r.Status)
	}
}
