package rulestest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// timelineClocks is a sandbox clock at testNow and the client clocks over
// it, wired into cfg as the sandbox wires them.
func timelineClocks(cfg scenarios.Config) (scenarios.Config, *clock.PerClient) {
	clients := clock.NewPerClient(clock.NewAdjustable(func() time.Time { return testNow }))
	cfg.Clock, cfg.ClientClock = clients.Global(), clients.Now
	return cfg, clients
}

// outage is the example: 5m of 503, 2m of 429, 10m of delays.
func outage(clientID string) scenarios.Rule {
	return scenarios.Rule{Endpoint: scenarios.EndpointAPI, ClientID: clientID, Timeline: []scenarios.Phase{
		{For: scenarios.Duration(5 * time.Minute), Status: 503, RetryAfterSeconds: 30},
		{For: scenarios.Duration(2 * time.Minute), Status: 429, RetryAfterSeconds: 5},
		{For: scenarios.Duration(10 * time.Minute), Delay: &scenarios.Delay{Fixed: scenarios.Duration(800 * time.Millisecond)}},
	}}
}

// wantPhase checks the decision for req and where the listing says the
// timeline is.
func wantPhase(t *testing.T, e scenarios.Engine, req scenarios.Request, status int, delay time.Duration, phase int, left time.Duration) {
	t.Helper()
	d, ok := decide(t, e, req)
	if !ok || d.Status != status || d.Delay != delay {
		t.Fatalf("decision %+v, %v; want status %d delay %s (phase %d)", d, ok, status, delay, phase)
	}
	rs := rules(t, e)
	if len(rs) != 1 || rs[0].TimelineNow == nil {
		t.Fatalf("rules %+v, want the timeline with where it is", rs)
	}
	if now := rs[0].TimelineNow; now.Phase != phase || now.TimeLeft.D() != left {
		t.Errorf("timeline at phase %d with %s left, want phase %d with %s left", now.Phase, now.TimeLeft, phase, left)
	}
}

// testTimelineThroughClockMoves: a timeline moves through its phases as
// the sandbox clock moves, counting from when it was added, and retires
// after the last.
func testTimelineThroughClockMoves(t *testing.T, open Opener, cfg scenarios.Config) {
	cfg, clocks := timelineClocks(cfg)
	e := open(t, cfg)
	clocks.Global().Advance(time.Hour) // before the rule: does not count
	added := mustAdd(t, e, outage(""))
	if added.TimelineNow == nil || added.TimelineNow.Phase != 0 || !added.TimelineNow.StartedAt.Equal(testNow.Add(time.Hour)) {
		t.Fatalf("added %+v, want phase 0 started at activation", added.TimelineNow)
	}
	req := apiReq("anyone")
	wantPhase(t, e, req, 503, 0, 0, 5*time.Minute)
	clocks.Global().Advance(4*time.Minute + 59*time.Second)
	wantPhase(t, e, req, 503, 0, 0, time.Second)
	clocks.Global().Advance(time.Second)
	wantPhase(t, e, req, 429, 0, 1, 2*time.Minute)
	clocks.Global().Advance(2 * time.Minute)
	wantPhase(t, e, req, 0, 800*time.Millisecond, 2, 10*time.Minute)
	clocks.Global().Advance(10 * time.Minute)
	if d, ok := decide(t, e, req); ok {
		t.Fatalf("after the last phase: %+v, want the normal answer", d)
	}
	if rs := rules(t, e); len(rs) != 0 {
		t.Fatalf("after the last phase: %+v, want the rule retired", rs)
	}
	if _, err := e.Get(context.Background(), added.ID); !errors.Is(err, scenarios.ErrNotFound) {
		t.Errorf("Get retired timeline: %v, want ErrNotFound", err)
	}
}

// testTimelinePerClient: a timeline bound to a client runs on that
// client's own clock, from its activation, and another client's clock
// moves nothing.
func testTimelinePerClient(t *testing.T, open Opener, cfg scenarios.Config) {
	cfg, clocks := timelineClocks(cfg)
	e := open(t, cfg)
	clocks.Advance("job-a", 3*time.Hour) // job-a's clock is ahead before activation
	mustAdd(t, e, outage("job-a"))
	wantPhase(t, e, apiReq("job-a"), 503, 0, 0, 5*time.Minute)
	clocks.Advance("job-b", 6*time.Minute)
	wantPhase(t, e, apiReq("job-a"), 503, 0, 0, 5*time.Minute)
	clocks.Advance("job-a", 6*time.Minute)
	wantPhase(t, e, apiReq("job-a"), 429, 0, 1, time.Minute)
	if d, ok := decide(t, e, apiReq("job-b")); ok {
		t.Errorf("job-b: %+v, want the normal answer (the rule is job-a's)", d)
	}

	// A library timeline activated for a client starts on its clock too.
	clocks.Advance("job-c", 24*time.Hour)
	if _, err := e.Activate(context.Background(), "maintenance-window", "job-c"); err != nil {
		t.Fatal(err)
	}
	if d, ok := decide(t, e, apiReq("job-c")); !ok || d.Status != 503 {
		t.Fatalf("job-c right after activation: %+v, %v, want 503", d, ok)
	}
	clocks.Advance("job-c", 30*time.Minute)
	if d, ok := decide(t, e, apiReq("job-c")); ok {
		t.Errorf("job-c after the window: %+v, want the normal answer", d)
	}
}

// testTimelineValidation: effects and counting go in the phases.
func testTimelineValidation(t *testing.T, open Opener, cfg scenarios.Config) {
	e := open(t, cfg)
	phase := scenarios.Phase{For: scenarios.Duration(time.Minute), Status: 503}
	for name, r := range map[string]scenarios.Rule{
		"status beside":    {Status: 503, Timeline: []scenarios.Phase{phase}},
		"times beside":     {Times: 2, Timeline: []scenarios.Phase{phase}},
		"no for":           {Timeline: []scenarios.Phase{{Status: 503}}},
		"only lulls":       {Timeline: []scenarios.Phase{{For: scenarios.Duration(time.Minute)}}},
		"bad phase status": {Endpoint: scenarios.EndpointToken, Timeline: []scenarios.Phase{{For: scenarios.Duration(time.Minute), Status: 418}}},
		"bad phase fault":  {Timeline: []scenarios.Phase{{For: scenarios.Duration(time.Minute), Fault: "explode"}}},
		"retry in a lull":  {Timeline: []scenarios.Phase{phase, {For: scenarios.Duration(time.Minute), RetryAfterSeconds: 3}}},
		"too long a phase": {Timeline: []scenarios.Phase{{For: scenarios.Duration(8 * 24 * time.Hour), Status: 503}}},
	} {
		var fe *scenarios.FieldError
		if _, err := e.Add(context.Background(), r); !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a field error", name, err)
		}
	}
	if rs := rules(t, e); len(rs) != 0 {
		t.Errorf("refused rules were added: %+v", rs)
	}
}

// testTimelineActivationEnds: an activation whose timeline is past its
// last phase is marked ended on its client's clock, and another client's
// activation of the same scenario is not.
func testTimelineActivationEnds(t *testing.T, open Opener, cfg scenarios.Config) {
	cfg, clocks := timelineClocks(cfg)
	e := open(t, cfg)
	ctx := context.Background()
	for _, client := range []string{"job-c", "job-d"} {
		if _, err := e.Activate(ctx, "maintenance-window", client); err != nil {
			t.Fatal(err)
		}
	}
	if acts := active(t, e); len(acts) != 2 || acts[0].Ended || acts[1].Ended {
		t.Fatalf("right after activation: %+v, want two activations in effect", acts)
	}
	clocks.Advance("job-c", 30*time.Minute)
	acts := active(t, e)
	if len(acts) != 2 || acts[0].ClientID != "job-c" || !acts[0].Ended || acts[1].Ended {
		t.Fatalf("after job-c's window: %+v, want job-c's ended and job-d's in effect", acts)
	}
	if err := e.Deactivate(ctx, "maintenance-window", "job-c"); err != nil {
		t.Errorf("deactivating an ended activation: %v", err)
	}
}
