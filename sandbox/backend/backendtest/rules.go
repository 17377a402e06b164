package backendtest

import (
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// rules opens a backend whose failure rules are built from what the suite
// gives an engine: its library, its rule cap, and its clocks. A backend
// takes the sandbox clock as an Adjustable: the suite's own when it is one
// (the timeline tests move it), else one that is never moved, reading the
// suite's fixed time. The clock of timelines bound to a client is set on
// the backend's rules as Backend.Bind sets it, here to the suite's client
// clocks, which it moves itself. A rule id namer the backend cannot take,
// so a suite that gives one fails rather than being run without it.
//
// In shared mode the backend points the suite's library at the saved
// scenarios of its own prefix; the suite saves no scenario and opens its
// engines one test at a time, so no test finds another's.
func (o Opener) rules(t *testing.T, sc scenarios.Config) scenarios.Engine {
	t.Helper()
	if sc.NewID != nil {
		t.Fatal("backendtest: a backend names its rules itself and takes no NewID")
	}
	cfg := config()
	cfg.Library, cfg.MaxRules, cfg.Clock = sc.Library, sc.MaxRules, sandboxClock(sc.Clock)
	rules := o(t, cfg).Rules
	if sc.ClientClock != nil {
		rules.UseClientClock(sc.ClientClock)
	}
	return rules
}

// sandboxClock is c as the sandbox clock a backend takes.
func sandboxClock(c clock.Clock) *clock.Adjustable {
	switch c := c.(type) {
	case nil:
		return clock.NewAdjustable(time.Now)
	case *clock.Adjustable:
		return c
	default:
		return clock.NewAdjustable(c.Now)
	}
}
