package scenarios

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestActivateDeactivate(t *testing.T) { forEachEngine(t, testActivateDeactivate) }

func testActivateDeactivate(t *testing.T, newEngine func(*testing.T) *Engine) {
	e := newEngine(t)
	manual := mustAdd(t, e, Rule{Endpoint: EndpointPing, Status: 500})
	rules, err := e.Activate("permissions-revoked", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].Scenario != "permissions-revoked" || rules[0].ID == "" {
		t.Fatalf("activated rules %+v", rules)
	}
	if _, err := e.Activate("token-endpoint-down", ""); err != nil {
		t.Fatal(err)
	}
	if d, ok := e.Decide(context.Background(), apiReq("a")); !ok || d.Status != 403 || d.Scenario != "permissions-revoked" {
		t.Errorf("api decision %+v, %v", d, ok)
	}

	// Activating again replaces: still one rule for the scenario.
	if _, err := e.Activate("permissions-revoked", ""); err != nil {
		t.Fatal(err)
	}
	if n := countScenario(e, "permissions-revoked"); n != 1 {
		t.Errorf("%d permissions-revoked rules after activating twice, want 1", n)
	}
	if got := len(e.Active()); got != 2 {
		t.Errorf("%d activations, want 2: %+v", got, e.Active())
	}

	if !e.Deactivate("permissions-revoked", "") || e.Deactivate("permissions-revoked", "") {
		t.Error("Deactivate should report true once")
	}
	if _, ok := e.Decide(context.Background(), apiReq("a")); ok {
		t.Error("api still failing after deactivation")
	}
	if d, ok := e.Decide(context.Background(), Request{Endpoint: EndpointToken}); !ok || d.Status != 503 {
		t.Errorf("other scenario affected: %+v, %v", d, ok)
	}
	if _, ok := e.Get(manual.ID); !ok {
		t.Error("manual rule removed by deactivation")
	}
	if act := e.Active(); len(act) != 1 || act[0].Name != "token-endpoint-down" || !act[0].ActivatedAt.Equal(testNow) {
		t.Errorf("Active() = %+v", act)
	}
}

func countScenario(e *Engine, name string) int {
	n := 0
	for _, r := range e.Rules() {
		if r.Scenario == name {
			n++
		}
	}
	return n
}

func TestActivateBoundToClient(t *testing.T) { forEachEngine(t, testActivateBoundToClient) }

func testActivateBoundToClient(t *testing.T, newEngine func(*testing.T) *Engine) {
	e := newEngine(t)
	for _, c := range []string{"job-a", "job-b"} {
		rules, err := e.Activate("api-unavailable-then-recovers", c)
		if err != nil {
			t.Fatal(err)
		}
		if rules[0].ClientID != c {
			t.Errorf("rule not bound to %s: %+v", c, rules[0])
		}
	}
	if _, ok := e.Decide(context.Background(), apiReq("job-c")); ok {
		t.Error("unbound client affected")
	}
	// Each job gets its own three 503s.
	for _, c := range []string{"job-a", "job-b"} {
		got := decisions(e, 4, func(int) Request { return apiReq(c) })
		if want := "[true true true false]"; fmt.Sprint(got) != want {
			t.Errorf("%s fired %v, want %s", c, got, want)
		}
	}
	// Re-activating for job-a resets only job-a.
	if _, err := e.Activate("api-unavailable-then-recovers", "job-a"); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Decide(context.Background(), apiReq("job-a")); !ok {
		t.Error("re-activation did not reset job-a")
	}
	if _, ok := e.Decide(context.Background(), apiReq("job-b")); ok {
		t.Error("re-activation for job-a touched job-b")
	}
	if !e.Deactivate("api-unavailable-then-recovers", "job-b") {
		t.Error("Deactivate job-b found nothing")
	}
	if act := e.Active(); len(act) != 1 || act[0].ClientID != "job-a" {
		t.Errorf("Active() = %+v", act)
	}
}

func TestActivateUnknown(t *testing.T) { forEachEngine(t, testActivateUnknown) }

func testActivateUnknown(t *testing.T, newEngine func(*testing.T) *Engine) {
	e := newEngine(t)
	if _, err := e.Activate("no-such-thing", ""); !errors.Is(err, ErrUnknownScenario) {
		t.Errorf("err = %v, want ErrUnknownScenario", err)
	}
	if _, _, err := e.DecideScenario("no-such-thing", apiReq("a")); !errors.Is(err, ErrUnknownScenario) {
		t.Errorf("err = %v, want ErrUnknownScenario", err)
	}
	if len(e.Active()) != 0 {
		t.Error("failed activation left an activation")
	}
}

func TestDecideScenarioTouchesNoCounters(t *testing.T) {
	forEachEngine(t, testDecideScenarioTouchesNoCounters)
}

func testDecideScenarioTouchesNoCounters(t *testing.T, newEngine func(*testing.T) *Engine) {
	e := newEngine(t)
	if _, err := e.Activate("api-unavailable-then-recovers", ""); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		d, ok, err := e.DecideScenario("api-unavailable-then-recovers", apiReq("a"))
		if err != nil || !ok || d.Status != 503 || d.RetryAfter <= 0 || d.Scenario != "api-unavailable-then-recovers" {
			t.Fatalf("DecideScenario = %+v, %v, %v", d, ok, err)
		}
	}
	// The active scenario still has all three of its 503s.
	got := decisions(e, 4, func(int) Request { return apiReq("a") })
	if fmt.Sprint(got) != "[true true true false]" {
		t.Errorf("active rule fired %v after per-request use", got)
	}
	// Probability is ignored: the per-request form always applies.
	for range 5 {
		if d, ok, _ := e.DecideScenario("flaky", apiReq("a")); !ok || d.Status != 503 {
			t.Errorf("flaky per request = %+v, %v", d, ok)
		}
	}
	// No matching rule: the scenario targets the api, not the token endpoint.
	if _, ok, err := e.DecideScenario("permissions-revoked", Request{Endpoint: EndpointToken}); ok || err != nil {
		t.Errorf("token request matched permissions-revoked: %v, %v", ok, err)
	}
	if d, ok, _ := e.DecideScenario("slow-network", Request{Endpoint: EndpointPing}); !ok || d.Delay <= 0 || d.RuleID != "slow-network.rules[0]" {
		t.Errorf("slow-network per request = %+v, %v", d, ok)
	}
}
