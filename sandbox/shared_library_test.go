package sandbox_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// savedBody is a scenario to POST to /__sandbox/library: the API answers
// 503 with Retry-After 9.
func savedBody(name string) map[string]any {
	return map[string]any{"name": name, "description": "Our Friday outage.",
		"rules": []any{map[string]any{"endpoint": "api", "status": 503, "retryAfterSeconds": 9}}}
}

// libraryNames is the scenario names GET /__sandbox/library lists through s.
func libraryNames(t *testing.T, s *testSandbox) []string {
	t.Helper()
	var v struct{ Scenarios []struct{ Name string } }
	s.admin(http.MethodGet, "/__sandbox/library", nil).decode(t, &v)
	var names []string
	for _, sc := range v.Scenarios {
		names = append(names, sc.Name)
	}
	return names
}

// TestSharedSavedScenariosAcrossReplicas: a scenario saved through
// replica A is known to replica B at once: by name, in its list, on a
// request naming it (X-Sandbox-Scenario) and for activation, whose rules
// then apply through A and are listed there. A taken name is a 409
// whichever replica is asked, and a reset keeps saved scenarios, as with
// one process.
func TestSharedSavedScenariosAcrossReplicas(t *testing.T) {
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	if r := a.admin(http.MethodPost, "/__sandbox/library", savedBody("team-outage")); r.Status != http.StatusCreated {
		t.Fatalf("save through A: %d %s", r.Status, r.Body)
	}

	r := b.admin(http.MethodGet, "/__sandbox/library/team-outage", nil)
	var got scenarios.Scenario
	r.decode(t, &got)
	if r.Status != http.StatusOK || got.Description != "Our Friday outage." || len(got.Rules) != 1 || got.Rules[0].Status != 503 {
		t.Fatalf("GET through B: %d %s, want the scenario as saved", r.Status, r.Body)
	}
	if names := libraryNames(t, b); !slices.Contains(names, "team-outage") || !slices.Contains(names, "flaky") {
		t.Errorf("B lists %v, want the saved scenario beside the embedded ones", names)
	}

	tok := a.token(partner)
	named := balanced(a, request{path: trialsPath, token: tok, plain: true, headers: map[string]string{sandbox.ScenarioHeader: "team-outage"}})
	wantForced(t, b.do(named), http.StatusServiceUnavailable, "9")

	b.activate("team-outage", partner)
	wantForced(t, a.do(balanced(a, request{path: trialsPath, token: tok, plain: true})), http.StatusServiceUnavailable, "9")
	if _, active := ruleIDs(t, a); !slices.Contains(active, "team-outage/"+partner) {
		t.Errorf("A lists the activations %v, want team-outage for %s", active, partner)
	}

	if r := b.adminInvalid(http.MethodPost, "/__sandbox/library", savedBody("team-outage")); r.Status != http.StatusConflict {
		t.Errorf("the name again through B: %d %s, want 409", r.Status, r.Body)
	}
	if r := b.admin(http.MethodPost, "/__sandbox/reset", nil); r.Status != http.StatusOK {
		t.Fatalf("reset through B: %d %s", r.Status, r.Body)
	}
	if r := a.admin(http.MethodGet, "/__sandbox/library/team-outage", nil); r.Status != http.StatusOK {
		t.Errorf("after a reset, GET through A: %d, want the saved scenario kept", r.Status)
	}
}

// TestSharedSavedScenariosBoundedAcrossReplicas: saves through two
// replicas at once share one cap, MaxSavedScenarios, and one name is
// taken by exactly one of them.
func TestSharedSavedScenariosBoundedAcrossReplicas(t *testing.T) {
	rs := replicas(t, 2)
	const extra = 10
	statuses := make([]int, scenarios.MaxSavedScenarios+extra)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			r, err := rs[i%2].send(nil, request{method: http.MethodPost, path: "/__sandbox/library", body: savedBody(fmt.Sprintf("saved-%03d", i)), plain: true})
			if err != nil {
				t.Errorf("save %d: %v", i, err)
				return
			}
			statuses[i] = r.Status
		})
	}
	wg.Wait()
	if got := countStatuses(statuses); got[http.StatusCreated] != scenarios.MaxSavedScenarios || got[http.StatusUnprocessableEntity] != extra {
		t.Errorf("statuses %v, want %d saved and %d refused with 422", got, scenarios.MaxSavedScenarios, extra)
	}

	rs = replicas(t, 2) // with room
	statuses = make([]int, 10)
	for i := range statuses {
		wg.Go(func() {
			r, err := rs[i%2].send(nil, request{method: http.MethodPost, path: "/__sandbox/library", body: savedBody("contested"), plain: true})
			if err != nil {
				t.Errorf("save %d: %v", i, err)
				return
			}
			statuses[i] = r.Status
		})
	}
	wg.Wait()
	if got := countStatuses(statuses); got[http.StatusCreated] != 1 || got[http.StatusConflict] != 9 {
		t.Errorf("one name saved through both at once: statuses %v, want one 201 and nine 409", got)
	}
}
