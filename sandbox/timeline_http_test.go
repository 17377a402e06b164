package sandbox_test

import (
	"net/http"
	"testing"
	"time"
)

// listedTimeline is a rule as GET /__sandbox/scenarios lists it, with
// where its timeline is.
type listedTimeline struct {
	ID          string `json:"id"`
	Scenario    string `json:"scenario"`
	ClientID    string `json:"clientId"`
	TimelineNow *struct {
		Phase    int    `json:"phase"`
		TimeLeft string `json:"timeLeft"`
	} `json:"timelineNow"`
}

// timelines lists the active rules.
func (s *testSandbox) timelines() []listedTimeline {
	s.t.Helper()
	var list struct {
		Rules []listedTimeline `json:"rules"`
	}
	s.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(s.t, &list)
	return list.Rules
}

// wantTimelineAt checks that the one listed rule is in phase with at most
// left (and more than left minus a minute: real time moves too) to go.
func (s *testSandbox) wantTimelineAt(phase int, left time.Duration) {
	s.t.Helper()
	rules := s.timelines()
	if len(rules) != 1 || rules[0].TimelineNow == nil {
		s.t.Fatalf("listed rules %+v, want one timeline", rules)
	}
	got, err := time.ParseDuration(rules[0].TimelineNow.TimeLeft)
	if rules[0].TimelineNow.Phase != phase || err != nil || got > left || got <= left-time.Minute {
		s.t.Fatalf("timeline at phase %d with %s left, want phase %d with %s left", rules[0].TimelineNow.Phase, rules[0].TimelineNow.TimeLeft, phase, left)
	}
}

// wantForced checks a forced status and Retry-After, or a normal 200.
func wantForced(t *testing.T, r *response, status int, retryAfter string) {
	t.Helper()
	if r.Status != status || r.Header.Get("Retry-After") != retryAfter {
		t.Fatalf("answer %d Retry-After %q, want %d %q; body %s", r.Status, r.Header.Get("Retry-After"), status, retryAfter, r.Body)
	}
}

// issueTimeline is the issue's example, with a short delay phase.
func issueTimeline(clientID string) map[string]any {
	rule := map[string]any{"endpoint": "api", "timeline": []map[string]any{
		{"for": "5m", "status": 503, "retryAfterSeconds": 30},
		{"for": "2m", "status": 429, "retryAfterSeconds": 5},
		{"for": "10m", "delay": map[string]any{"fixed": "20ms"}},
	}}
	if clientID != "" {
		rule["clientId"] = clientID
	}
	return rule
}

// TestTimelineThroughClockMoves: a timeline rule answers by phase as the
// sandbox clock moves, the listing shows the phase and the time left, and
// the rule retires after the last phase.
func TestTimelineThroughClockMoves(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	id := s.addRule(issueTimeline(""))
	s.wantTimelineAt(0, 5*time.Minute)
	wantForced(t, s.do(request{path: trialsPath, token: tok}), 503, "30")
	s.advance(5 * time.Minute)
	s.wantTimelineAt(1, 2*time.Minute)
	wantForced(t, s.do(request{path: trialsPath, token: tok}), 429, "5")
	s.advance(2 * time.Minute)
	s.wantTimelineAt(2, 10*time.Minute)
	r := s.do(request{path: trialsPath, token: tok})
	wantForced(t, r, 200, "")
	if r.Header.Get("Sandbox-Rule") != id {
		t.Errorf("delayed answer's Sandbox-Rule %q, want %s", r.Header.Get("Sandbox-Rule"), id)
	}
	s.advance(10 * time.Minute)
	r = s.do(request{path: trialsPath, token: tok})
	if r.Status != http.StatusOK || r.Header.Get("Sandbox-Rule") != "" {
		t.Errorf("after the last phase: %d Sandbox-Rule %q, want the normal answer", r.Status, r.Header.Get("Sandbox-Rule"))
	}
	if rules := s.timelines(); len(rules) != 0 {
		t.Errorf("after the last phase the rules %+v are listed, want the timeline retired", rules)
	}
	if r := s.admin(http.MethodGet, "/__sandbox/scenarios/"+id, nil); r.Status != http.StatusNotFound {
		t.Errorf("GET retired timeline: %d, want 404", r.Status)
	}
}

// TestTimelinePerClient: a named incident activated for one client runs on
// that client's clock; moving it moves only that client through the
// phases, and other clients never see the incident.
func TestTimelinePerClient(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	mine, other := s.token(partner), s.token(partner2)
	s.activate("outage-then-throttling", partner)
	wantForced(t, s.do(request{path: trialsPath, token: mine}), 503, "30")
	wantForced(t, s.do(request{path: trialsPath, token: other}), 200, "")
	if r := s.admin(http.MethodPost, "/__sandbox/clock", map[string]any{"clientId": partner2, "advance": "5m"}); r.Status != http.StatusOK {
		t.Fatalf("advance %s's clock: %d %s", partner2, r.Status, r.Body)
	}
	wantForced(t, s.do(request{path: trialsPath, token: mine}), 503, "30")
	if r := s.admin(http.MethodPost, "/__sandbox/clock", map[string]any{"clientId": partner, "advance": "5m"}); r.Status != http.StatusOK {
		t.Fatalf("advance %s's clock: %d %s", partner, r.Status, r.Body)
	}
	wantForced(t, s.do(request{path: trialsPath, token: mine}), 429, "5")
	s.wantTimelineAt(1, 2*time.Minute)
}

// TestSharedTimelineAcrossReplicas: a timeline added through one replica
// changes phase on every replica at once when the clock moves through
// another.
func TestSharedTimelineAcrossReplicas(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	tok := a.token(partner)
	a.addRule(issueTimeline(partner))
	for _, replica := range rs {
		wantForced(t, replica.do(balanced(a, request{path: trialsPath, token: tok, plain: true})), 503, "30")
	}
	if r := b.admin(http.MethodPost, "/__sandbox/clock", map[string]any{"clientId": partner, "advance": "5m"}); r.Status != http.StatusOK {
		t.Fatalf("advance through B: %d %s", r.Status, r.Body)
	}
	for _, replica := range rs {
		wantForced(t, replica.do(balanced(a, request{path: trialsPath, token: tok, plain: true})), 429, "5")
		replica.wantTimelineAt(1, 2*time.Minute)
	}
	b.advance(12 * time.Minute)
	for _, replica := range rs {
		if r := replica.do(balanced(a, request{path: trialsPath, token: tok, plain: true})); r.Status != http.StatusOK || r.Header.Get("Sandbox-Rule") != "" {
			t.Errorf("after the last phase: %d Sandbox-Rule %q, want the normal answer", r.Status, r.Header.Get("Sandbox-Rule"))
		}
		if rules := replica.timelines(); len(rules) != 0 {
			t.Errorf("after the last phase: %+v listed, want none", rules)
		}
	}
}

// TestTimelineOnOneRequest: X-Sandbox-Scenario naming a timeline applies
// its first phase that changes the answer, and activates nothing.
func TestTimelineOnOneRequest(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	r := s.do(request{path: trialsPath, token: tok, headers: map[string]string{"X-Sandbox-Scenario": "maintenance-window"}})
	wantForced(t, r, 503, "300")
	wantForced(t, s.do(request{path: trialsPath, token: tok}), 200, "")
	if rules := s.timelines(); len(rules) != 0 {
		t.Errorf("one request activated %+v", rules)
	}
}

// TestEndedTimelineLeavesActive: once a scenario's timeline is past its
// last phase, the listings move its activation from active to ended, so
// neither the console nor a script shows an incident that is over as on.
func TestEndedTimelineLeavesActive(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.activate("maintenance-window", "")
	type listing struct {
		Active []struct{ Name string } `json:"active"`
		Ended  []struct {
			Name  string `json:"name"`
			Ended bool   `json:"ended"`
		} `json:"ended"`
	}
	for _, path := range []string{"/__sandbox/scenarios", "/__sandbox/library"} {
		var during listing
		s.admin(http.MethodGet, path, nil).decode(t, &during)
		if len(during.Active) != 1 || len(during.Ended) != 0 {
			t.Fatalf("%s during the window: %+v, want it active", path, during)
		}
	}
	s.advance(30 * time.Minute)
	for _, path := range []string{"/__sandbox/scenarios", "/__sandbox/library"} {
		var after listing
		s.admin(http.MethodGet, path, nil).decode(t, &after)
		if len(after.Active) != 0 || len(after.Ended) != 1 || after.Ended[0].Name != "maintenance-window" || !after.Ended[0].Ended {
			t.Fatalf("%s after the window: %+v, want it under ended only", path, after)
		}
	}
	if r := s.admin(http.MethodDelete, "/__sandbox/library/maintenance-window", nil); r.Status != http.StatusNoContent {
		t.Fatalf("switching off an ended scenario: %d %s", r.Status, r.Body)
	}
}
