package rulestest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

func testNotFound(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	ctx := context.Background()
	if _, err := e.Get(ctx, "nope"); !errors.Is(err, scenarios.ErrNotFound) {
		t.Errorf("Get unknown: %v, want ErrNotFound", err)
	}
	if err := e.Remove(ctx, "nope"); !errors.Is(err, scenarios.ErrNotFound) {
		t.Errorf("Remove unknown: %v, want ErrNotFound", err)
	}
	if err := e.Deactivate(ctx, "flaky", ""); !errors.Is(err, scenarios.ErrNotFound) {
		t.Errorf("Deactivate inactive: %v, want ErrNotFound", err)
	}
	if _, err := e.Activate(ctx, "flaky", "job-a"); err != nil {
		t.Fatal(err)
	}
	if err := e.Deactivate(ctx, "flaky", "job-b"); !errors.Is(err, scenarios.ErrNotFound) {
		t.Errorf("Deactivate for another client: %v, want ErrNotFound", err)
	}
	if err := e.ClearClient(ctx, "nobody"); err != nil {
		t.Errorf("ClearClient of a client with nothing: %v", err)
	}
}

// testRuleCap: MaxRules holds under concurrent adds, and an activation
// past it changes nothing.
func testRuleCap(t *testing.T, newEngine func(t *testing.T, maxRules int) scenarios.Engine) {
	e := newEngine(t, 5)
	var ok, full atomic.Int32
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			_, err := e.Add(context.Background(), scenarios.Rule{Status: 503})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, scenarios.ErrTooManyRules):
				full.Add(1)
			default:
				t.Errorf("Add: %v", err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 5 || full.Load() != 7 {
		t.Fatalf("%d added, %d refused; want 5 and 7 with a cap of 5", ok.Load(), full.Load())
	}
	ids := map[string]bool{}
	for _, r := range rules(t, e) {
		ids[r.ID] = true
	}
	if len(ids) != 5 {
		t.Errorf("rules listed: %v, want 5 distinct ids", ids)
	}
	if _, err := e.Activate(context.Background(), "flaky", "ci-1"); !errors.Is(err, scenarios.ErrTooManyRules) {
		t.Errorf("Activate past the cap: %v", err)
	}
	if len(active(t, e)) != 0 {
		t.Error("a refused activation is listed")
	}
}

// testPathMatching: the engine picks, for each request, the first rule
// that Rule.Matches says matches, whatever the mix of literal and "*"
// segments, trailing slashes and methods.
func testPathMatching(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	patterns := []scenarios.Rule{
		{ID: "exact", Method: "GET", Path: "/api/v1/referrals/trials", Status: 503},
		{ID: "two-stars", Path: "/api/v1/referrals/*/*", Status: 500},
		{ID: "trailing", Path: "/api/v1/referrals/", Status: 429},
		{ID: "middle-star", Method: "post", Path: "/api/*/referrals/qualified", Status: 503},
		{ID: "one-star", Path: "/api/v1/referrals/*", Status: 500},
		{ID: "health", Endpoint: scenarios.EndpointPing, Path: "/health/*", Status: 503},
		{ID: "any", Endpoint: scenarios.EndpointAPI, Method: "DELETE", Status: 500},
	}
	for _, r := range patterns {
		mustAdd(t, e, r)
	}
	api := func(method, path string) scenarios.Request {
		return scenarios.Request{Method: method, Path: path, ClientID: "a", Endpoint: scenarios.EndpointAPI}
	}
	reqs := []scenarios.Request{
		api("GET", "/api/v1/referrals/trials"), api("PUT", "/api/v1/referrals/trials"),
		api("GET", "/api/v1/referrals/TR-1/OUT-9"), api("GET", "/api/v1/referrals/TR-1/"),
		api("GET", "/api/v1/referrals/"), api("GET", "/api/v1/referrals"), api("GET", "/api/v1/referrals//x"),
		api("POST", "/api/v1/referrals/qualified"), api("POST", "/api/v2/referrals/qualified"),
		api("DELETE", "/anything/at/all"), api("GET", "/"), api("GET", ""), api("GET", "/api/v1/referrals/a/b/c"),
		{Method: "GET", Path: "/health/ping", Endpoint: scenarios.EndpointPing},
		{Method: "GET", Path: "/health/", Endpoint: scenarios.EndpointPing},
	}
	for _, req := range reqs {
		want := ""
		for _, r := range patterns {
			if r.Matches(req) {
				want = r.ID
				break
			}
		}
		d, _ := decide(t, e, req)
		if d.RuleID != want {
			t.Errorf("%s %s (%s) decided by %q, want %q", req.Method, req.Path, req.Endpoint, d.RuleID, want)
		}
	}
}

// testEmptyListsAreNotNil: an engine with nothing lists empty lists, which
// the admin API writes as [] (not null).
func testEmptyListsAreNotNil(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	if rs := rules(t, e); rs == nil || len(rs) != 0 {
		t.Errorf("Rules() = %#v, want an empty non-nil list", rs)
	}
	if as := active(t, e); as == nil || len(as) != 0 {
		t.Errorf("Active() = %#v, want an empty non-nil list", as)
	}
	if _, ok := decide(t, e, apiReq("a")); ok {
		t.Error("a decision with no rules")
	}
}
