// Package rulestest is the conformance suite every scenarios.Engine must
// pass. Each implementation's tests call Run with a function that opens a
// fresh, empty engine; the same behaviour is then checked against all of
// them (the in-memory engine and the one shared through Redis).
//
// It is part of the module's tests; it is not a stable API.
package rulestest

import (
	"context"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// testNow is the time of the Clock in the Config Run passes to open: rules'
// addedAt and activations' activatedAt must read it.
var testNow = time.Date(2025, 11, 3, 9, 30, 0, 0, time.UTC)

// Opener returns a new engine with no rules and no activations, built
// with cfg (the embedded library and a clock fixed at testNow; MaxRules when a
// test sets it).
type Opener func(t *testing.T, cfg scenarios.Config) scenarios.Engine

// Run runs the conformance suite against the engines open makes.
func Run(t *testing.T, open Opener) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, open func(t *testing.T) scenarios.Engine)
	}{
		{"TimesExactUnderConcurrency", testTimesExactUnderConcurrency},
		{"Counting", testCounting},
		{"PerClientTimesConcurrent", testPerClientTimesConcurrent},
		{"PerClientUnregisteredIDsShareOneCounter", testPerClientUnregisteredIDsShareOneCounter},
		{"SeededProbability", testSeededProbability},
		{"SeededDelaysReplay", testSeededDelaysReplay},
		{"ClientBoundRule", testClientBoundRule},
		{"FirstFiringRuleWins", testFirstFiringRuleWins},
		{"DecisionFields", testDecisionFields},
		{"RuleManagement", testRuleManagement},
		{"NotFound", testNotFound},
		{"AddCopiesDelay", testAddCopiesDelay},
		{"PathMatching", testPathMatching},
		{"ActivateDeactivate", testActivateDeactivate},
		{"ActivateBoundToClient", testActivateBoundToClient},
		{"ActivateUnknown", testActivateUnknown},
		{"DecideScenarioTouchesNoCounters", testDecideScenarioTouchesNoCounters},
		{"ClearClientLeavesOtherClientsRules", testClearClientLeavesOtherClientsRules},
		{"EmptyListsAreNotNil", testEmptyListsAreNotNil},
	}
	lib, err := scenarios.LoadLibrary()
	if err != nil {
		t.Fatalf("LoadLibrary: %v", err)
	}
	withCap := func(t *testing.T, maxRules int) scenarios.Engine {
		t.Helper()
		return open(t, scenarios.Config{Library: lib, Clock: clock.Func(func() time.Time { return testNow }), MaxRules: maxRules})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, func(t *testing.T) scenarios.Engine { t.Helper(); return withCap(t, 0) })
		})
	}
	t.Run("RuleCap", func(t *testing.T) { testRuleCap(t, withCap) })
	base := scenarios.Config{Library: lib}
	t.Run("TimelineThroughClockMoves", func(t *testing.T) { testTimelineThroughClockMoves(t, open, base) })
	t.Run("TimelinePerClient", func(t *testing.T) { testTimelinePerClient(t, open, base) })
	t.Run("TimelineValidation", func(t *testing.T) { testTimelineValidation(t, open, base) })
	t.Run("TimelineActivationEnds", func(t *testing.T) { testTimelineActivationEnds(t, open, base) })
}

// mustAdd adds r or fails the test.
func mustAdd(t *testing.T, e scenarios.Engine, r scenarios.Rule) scenarios.RuleStatus {
	t.Helper()
	added, err := e.Add(context.Background(), r)
	if err != nil {
		t.Fatalf("Add(%+v): %v", r, err)
	}
	return added
}

// decide runs Decide and fails the test on an error.
func decide(t *testing.T, e scenarios.Engine, req scenarios.Request) (scenarios.Decision, bool) {
	t.Helper()
	d, ok, err := e.Decide(context.Background(), req)
	if err != nil {
		t.Fatalf("Decide(%+v): %v", req, err)
	}
	return d, ok
}

// rules lists the active rules or fails the test.
func rules(t *testing.T, e scenarios.Engine) []scenarios.RuleStatus {
	t.Helper()
	rs, err := e.Rules(context.Background())
	if err != nil {
		t.Fatalf("Rules: %v", err)
	}
	return rs
}

// active lists the activations or fails the test.
func active(t *testing.T, e scenarios.Engine) []scenarios.Activation {
	t.Helper()
	as, err := e.Active(context.Background())
	if err != nil {
		t.Fatalf("Active: %v", err)
	}
	return as
}

// decisions runs n requests through e and reports which ones a rule fired on.
func decisions(t *testing.T, e scenarios.Engine, n int, req func(i int) scenarios.Request) []bool {
	t.Helper()
	out := make([]bool, n)
	for i := range out {
		_, out[i] = decide(t, e, req(i))
	}
	return out
}

// apiReq is an API request of client.
func apiReq(client string) scenarios.Request {
	return scenarios.Request{Method: "GET", Path: "/api/v1/referrals/trials", ClientID: client, Endpoint: scenarios.EndpointAPI}
}
