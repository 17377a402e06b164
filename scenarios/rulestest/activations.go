package rulestest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

func testActivateDeactivate(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	manual := mustAdd(t, e, scenarios.Rule{Endpoint: scenarios.EndpointPing, Status: 500})
	rules, err := e.Activate(context.Background(), "permissions-revoked", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].Scenario != "permissions-revoked" || rules[0].ID == "" {
		t.Fatalf("activated rules %+v", rules)
	}
	if _, err := e.Activate(context.Background(), "token-endpoint-down", ""); err != nil {
		t.Fatal(err)
	}
	if d, ok := decide(t, e, apiReq("a")); !ok || d.Status != 403 || d.Scenario != "permissions-revoked" {
		t.Errorf("api decision %+v, %v", d, ok)
	}

	// Activating again replaces: still one rule for the scenario.
	if _, err := e.Activate(context.Background(), "permissions-revoked", ""); err != nil {
		t.Fatal(err)
	}
	if n := countScenario(t, e, "permissions-revoked"); n != 1 {
		t.Errorf("%d permissions-revoked rules after activating twice, want 1", n)
	}
	if got := len(active(t, e)); got != 2 {
		t.Errorf("%d activations, want 2: %+v", got, active(t, e))
	}

	if err := e.Deactivate(context.Background(), "permissions-revoked", ""); err != nil {
		t.Errorf("Deactivate: %v", err)
	}
	if err := e.Deactivate(context.Background(), "permissions-revoked", ""); !errors.Is(err, scenarios.ErrNotFound) {
		t.Errorf("Deactivate again: %v, want ErrNotFound", err)
	}
	if _, ok := decide(t, e, apiReq("a")); ok {
		t.Error("api still failing after deactivation")
	}
	if d, ok := decide(t, e, scenarios.Request{Endpoint: scenarios.EndpointToken}); !ok || d.Status != 503 {
		t.Errorf("other scenario affected: %+v, %v", d, ok)
	}
	if _, err := e.Get(context.Background(), manual.ID); err != nil {
		t.Error("manual rule removed by deactivation")
	}
	if act := active(t, e); len(act) != 1 || act[0].Name != "token-endpoint-down" || !act[0].ActivatedAt.Equal(testNow) {
		t.Errorf("Active() = %+v", act)
	}
}

func countScenario(t *testing.T, e scenarios.Engine, name string) int {
	t.Helper()
	n := 0
	for _, r := range rules(t, e) {
		if r.Scenario == name {
			n++
		}
	}
	return n
}

func testActivateBoundToClient(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	for _, c := range []string{"job-a", "job-b"} {
		rules, err := e.Activate(context.Background(), "api-unavailable-then-recovers", c)
		if err != nil {
			t.Fatal(err)
		}
		if rules[0].ClientID != c {
			t.Errorf("rule not bound to %s: %+v", c, rules[0])
		}
	}
	if _, ok := decide(t, e, apiReq("job-c")); ok {
		t.Error("unbound client affected")
	}
	// Each job gets its own three 503s.
	for _, c := range []string{"job-a", "job-b"} {
		got := decisions(t, e, 4, func(int) scenarios.Request { return apiReq(c) })
		if want := "[true true true false]"; fmt.Sprint(got) != want {
			t.Errorf("%s fired %v, want %s", c, got, want)
		}
	}
	// Re-activating for job-a resets only job-a.
	if _, err := e.Activate(context.Background(), "api-unavailable-then-recovers", "job-a"); err != nil {
		t.Fatal(err)
	}
	if _, ok := decide(t, e, apiReq("job-a")); !ok {
		t.Error("re-activation did not reset job-a")
	}
	if _, ok := decide(t, e, apiReq("job-b")); ok {
		t.Error("re-activation for job-a touched job-b")
	}
	if err := e.Deactivate(context.Background(), "api-unavailable-then-recovers", "job-b"); err != nil {
		t.Errorf("Deactivate job-b: %v", err)
	}
	if act := active(t, e); len(act) != 1 || act[0].ClientID != "job-a" {
		t.Errorf("Active() = %+v", act)
	}
}

func testActivateUnknown(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	if _, err := e.Activate(context.Background(), "no-such-thing", ""); !errors.Is(err, scenarios.ErrUnknownScenario) {
		t.Errorf("err = %v, want ErrUnknownScenario", err)
	}
	if _, _, err := e.DecideScenario(context.Background(), "no-such-thing", apiReq("a")); !errors.Is(err, scenarios.ErrUnknownScenario) {
		t.Errorf("err = %v, want ErrUnknownScenario", err)
	}
	if len(active(t, e)) != 0 {
		t.Error("failed activation left an activation")
	}
}

func testDecideScenarioTouchesNoCounters(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	if _, err := e.Activate(context.Background(), "api-unavailable-then-recovers", ""); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		d, ok, err := e.DecideScenario(context.Background(), "api-unavailable-then-recovers", apiReq("a"))
		if err != nil || !ok || d.Status != 503 || d.RetryAfter <= 0 || d.Scenario != "api-unavailable-then-recovers" {
			t.Fatalf("DecideScenario = %+v, %v, %v", d, ok, err)
		}
	}
	// The active scenario still has all three of its 503s.
	got := decisions(t, e, 4, func(int) scenarios.Request { return apiReq("a") })
	if fmt.Sprint(got) != "[true true true false]" {
		t.Errorf("active rule fired %v after per-request use", got)
	}
	// Probability is ignored: the per-request form always applies.
	for range 5 {
		if d, ok, _ := e.DecideScenario(context.Background(), "flaky", apiReq("a")); !ok || d.Status != 503 {
			t.Errorf("flaky per request = %+v, %v", d, ok)
		}
	}
	// No matching rule: the scenario targets the api, not the token endpoint.
	if _, ok, err := e.DecideScenario(context.Background(), "permissions-revoked", scenarios.Request{Endpoint: scenarios.EndpointToken}); ok || err != nil {
		t.Errorf("token request matched permissions-revoked: %v, %v", ok, err)
	}
	if d, ok, _ := e.DecideScenario(context.Background(), "slow-network", scenarios.Request{Endpoint: scenarios.EndpointPing}); !ok || d.Delay <= 0 || d.RuleID != "slow-network.rules[0]" {
		t.Errorf("slow-network per request = %+v, %v", d, ok)
	}
}

func testClearClientLeavesOtherClientsRules(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	for _, r := range []scenarios.Rule{
		{Endpoint: scenarios.EndpointAPI, Status: 503, ClientID: "a"},
		{Endpoint: scenarios.EndpointAPI, Status: 500, ClientID: "b"},
		{Endpoint: scenarios.EndpointAPI, Status: 429, PerClient: true, Times: 1},
	} {
		if _, err := e.Add(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	flaky, err := e.Activate(context.Background(), "flaky", "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Activate(context.Background(), "flaky", "b"); err != nil {
		t.Fatal(err)
	}
	before := len(rules(t, e))
	if err := e.ClearClient(context.Background(), "a"); err != nil {
		t.Fatalf("ClearClient: %v", err)
	}
	if got, want := len(rules(t, e)), before-1-len(flaky); got != want {
		t.Errorf("%d rules left, want %d (a's own rule and its flaky rules gone)", got, want)
	}
	if act := active(t, e); len(act) != 1 || act[0].ClientID != "b" {
		t.Errorf("activations left: %+v, want only b's", act)
	}
	if d, ok := decide(t, e, scenarios.Request{Endpoint: scenarios.EndpointAPI, ClientID: "b"}); !ok || d.Status == 503 {
		t.Errorf("b's decision %+v, %t: b's rules must stand", d, ok)
	}
}
