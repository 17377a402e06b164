package scenarios

import (
	"testing"
	"time"
)

// TestReplayTimeline: answers become phases with their timing from the
// window's first failure (the quiet minute before it is not replayed);
// alike neighbours merge, and other endpoints get their own rule, timed
// from the same start.
func TestReplayTimeline(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	answers := []Answer{
		{At: at(time.Minute), Endpoint: EndpointAPI, Status: 503, RetryAfterSeconds: 30},
		{At: at(2 * time.Minute), Endpoint: EndpointAPI, Status: 503, RetryAfterSeconds: 30},
		{At: at(3 * time.Minute), Endpoint: EndpointAPI, Status: 200, Slowed: 900 * time.Millisecond},
		{At: at(4 * time.Minute), Endpoint: EndpointAPI, Status: 200, Slowed: time.Millisecond},
		{At: at(90 * time.Second), Endpoint: EndpointToken, Fault: FaultReset},
		{At: at(time.Hour), Endpoint: EndpointAPI, Status: 503}, // after the window
	}
	sc, err := ReplayTimeline("replay", "d", answers, t0, at(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Rules) != 2 || sc.Rules[0].Endpoint != EndpointToken || sc.Rules[1].Endpoint != EndpointAPI {
		t.Fatalf("rules %+v, want a token and an API timeline", sc.Rules)
	}
	api := sc.Rules[1].Timeline
	want := []Phase{
		{For: Duration(2 * time.Minute), Status: 503, RetryAfterSeconds: 30},
		{For: Duration(time.Minute), Delay: &Delay{Fixed: Duration(900 * time.Millisecond)}},
		{For: Duration(time.Minute)},
	}
	if len(api) != len(want) {
		t.Fatalf("API phases %+v, want %+v", api, want)
	}
	for i := range want {
		if !sameEffect(api[i], want[i]) || api[i].For != want[i].For {
			t.Errorf("phase %d: %+v, want %+v", i, api[i], want[i])
		}
	}
	if tok := sc.Rules[0].Timeline; len(tok) != 2 || tok[1].Fault != FaultReset || tok[0].For != Duration(30*time.Second) {
		t.Errorf("token phases %+v, want a lull of 30s (from the API's first 503) then the reset", tok)
	}
	if d := sc.Rules[1].Description; d != "api answers from 2026-01-01T10:01:00Z" {
		t.Errorf("API rule described %q, want it to say where the replay starts", d)
	}
}
