package sandbox_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// withMaxRules caps the active rules at n, so a test reaches the cap with a
// few calls instead of scenarios.DefaultMaxRules.
func withMaxRules(n int) sandboxOption {
	return func(c *sandboxConfig) {
		c.MaxRules = n
	}
}

// TestRulesCapped: beyond the cap on active rules, adding a rule or
// activating a scenario is a 422 problem that says how to make room, and
// changes nothing; removing a rule makes room again.
func TestRulesCapped(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withMaxRules(3))
	rule := map[string]any{"endpoint": "ping", "status": 503}
	first := s.addRule(rule)
	s.addRule(rule)
	s.addRule(rule)

	over := s.admin(http.MethodPost, "/__sandbox/scenarios", rule)
	if over.Status != http.StatusUnprocessableEntity {
		t.Fatalf("fourth rule: %d %s, want 422", over.Status, over.Body)
	}
	if p := over.problem(t); !strings.Contains(p.Detail+p.Title, "at most 3") {
		t.Errorf("problem %+v does not name the cap", p)
	}
	act := s.admin(http.MethodPost, "/__sandbox/library/flaky", nil)
	if act.Status != http.StatusUnprocessableEntity {
		t.Fatalf("activating a scenario at the cap: %d %s, want 422", act.Status, act.Body)
	}
	act.problem(t)
	var listed struct {
		Rules  []scenarios.RuleStatus `json:"rules"`
		Active []scenarios.Activation `json:"active"`
	}
	s.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &listed)
	if len(listed.Rules) != 3 || len(listed.Active) != 0 {
		t.Errorf("after the refusals: %d rules, %d activations; want 3 and none", len(listed.Rules), len(listed.Active))
	}

	if r := s.admin(http.MethodDelete, "/__sandbox/scenarios/"+first, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete rule: %d %s", r.Status, r.Body)
	}
	s.addRule(rule)
}

// TestDefaultRuleCap: the documented default cap holds on the admin API.
func TestDefaultRuleCap(t *testing.T) {
	t.Parallel()
	memoryOnly(t, "in the shared mode each add reads and rewrites every active rule, so reaching the default cap takes a minute; TestSharedRuleCapAcrossReplicas tests the cap there")
	s := newSandbox(t)
	for range scenarios.DefaultMaxRules {
		s.addRule(map[string]any{"endpoint": "ping", "status": 503, "clientId": "nobody"})
	}
	if r := s.admin(http.MethodPost, "/__sandbox/scenarios", map[string]any{"endpoint": "ping", "status": 503}); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("rule %d: %d %s, want 422", scenarios.DefaultMaxRules+1, r.Status, r.Body)
	}
}
