package sandbox_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// TestTimelineFromJournalRoundTrip: the answers a window of the journal
// got are saved as a timeline on one sandbox, moved as JSON to another,
// and replayed there with their timing.
func TestTimelineFromJournalRoundTrip(t *testing.T) {
	t.Parallel()
	a := newSandbox(t)
	tok := a.token(partner)
	a.addRule(map[string]any{"endpoint": "api", "status": 503, "retryAfterSeconds": 7, "times": 2})
	wantForced(t, a.do(request{path: trialsPath, token: tok}), 503, "7")
	a.advance(time.Minute)
	wantForced(t, a.do(request{path: trialsPath, token: tok}), 503, "7")
	a.advance(time.Minute)
	wantForced(t, a.do(request{path: trialsPath, token: tok}), 200, "")
	a.advance(3 * time.Minute)
	var since time.Time
	for _, e := range a.journal(nil) {
		if e.Endpoint == "api" {
			since, _ = time.Parse(time.RFC3339Nano, e.At)
			break
		}
	}
	until := since.Add(5 * time.Minute)
	window := map[string]any{"since": since.Format(referrals.TimestampLayout), "until": until.Format(referrals.TimestampLayout), "clientId": partner}
	r := a.admin(http.MethodPost, "/__sandbox/library", map[string]any{"name": "replayed-outage", "fromJournal": window})
	if r.Status != http.StatusCreated || r.Header.Get("Location") != "/__sandbox/library/replayed-outage" {
		t.Fatalf("save from the journal: %d Location %q %s", r.Status, r.Header.Get("Location"), r.Body)
	}
	var saved scenarios.Scenario
	a.admin(http.MethodGet, "/__sandbox/library/replayed-outage", nil).decode(t, &saved)
	if len(saved.Rules) != 1 || saved.Rules[0].Endpoint != "api" || len(saved.Rules[0].Timeline) != 2 || saved.Description == "" {
		t.Fatalf("saved %+v, want one API timeline of two phases, described", saved)
	}
	outage, lull := saved.Rules[0].Timeline[0], saved.Rules[0].Timeline[1]
	if outage.Status != 503 || outage.RetryAfterSeconds != 7 || outage.For.D() < 2*time.Minute || outage.For.D() > 2*time.Minute+5*time.Second {
		t.Errorf("first phase %+v, want 503 with Retry-After 7 for the 2 minutes they lasted", outage)
	}
	if lull.Status != 0 || lull.Delay != nil || outage.For+lull.For != scenarios.Duration(5*time.Minute) {
		t.Errorf("second phase %+v, want normal answers to the end of the window", lull)
	}

	// Moved as JSON to another sandbox, where it replays.
	raw := a.admin(http.MethodGet, "/__sandbox/library/replayed-outage", nil).Body
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	b := newSandbox(t)
	if r := b.admin(http.MethodPost, "/__sandbox/library", body); r.Status != http.StatusCreated {
		t.Fatalf("save on the other sandbox: %d %s", r.Status, r.Body)
	}
	btok := b.token(partner2)
	b.activate("replayed-outage", partner2)
	wantForced(t, b.do(request{path: trialsPath, token: btok}), 503, "7")
	b.advance(outage.For.D())
	wantForced(t, b.do(request{path: trialsPath, token: btok}), 200, "")
	if r := b.admin(http.MethodPost, "/__sandbox/library", body); r.Status != http.StatusConflict {
		t.Errorf("saving the name again: %d, want 409", r.Status)
	}
}

// TestSaveScenarioRefusals: what cannot be saved is a clear 4xx naming
// the field, and nothing is saved.
func TestSaveScenarioRefusals(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	wantForced(t, s.do(request{path: trialsPath, token: tok}), 200, "")
	now := s.Clock.Now()
	// A window that ends before the requests above: whether their own
	// answers counted as slow (50 ms) would depend on the machine's load.
	quiet := map[string]any{"since": now.Add(-2 * time.Hour).Format(time.RFC3339), "until": now.Add(-time.Hour).Format(time.RFC3339)}
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"nothing to replay", map[string]any{"name": "quiet", "fromJournal": quiet}, "fromJournal"},
		{"bad since", map[string]any{"name": "x", "fromJournal": map[string]any{"since": "yesterday", "until": quiet["until"]}}, "fromJournal.since"},
		{"until before since", map[string]any{"name": "x", "fromJournal": map[string]any{"since": quiet["until"], "until": quiet["since"]}}, "fromJournal.until"},
		{"both", map[string]any{"name": "x", "fromJournal": quiet, "rules": []any{map[string]any{"status": 503}}}, "rules"},
		{"bad rule", map[string]any{"name": "x", "description": "d", "rules": []any{map[string]any{"status": 418}}}, "rules[0].status"},
	} {
		r := s.adminInvalid(http.MethodPost, "/__sandbox/library", tc.body)
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", tc.name, r.Status, r.Body)
			continue
		}
		wantFieldError(t, r.problem(t), tc.field)
	}
	if r := s.admin(http.MethodGet, "/__sandbox/library/quiet", nil); r.Status != http.StatusNotFound {
		t.Errorf("a refused scenario was saved: %d", r.Status)
	}
	if r := s.adminInvalid(http.MethodPost, "/__sandbox/library", map[string]any{"name": "flaky", "description": "d", "rules": []any{map[string]any{"status": 503}}}); r.Status != http.StatusConflict {
		t.Errorf("an embedded scenario's name: %d, want 409", r.Status)
	}
}

// TestTimelineFromJournalReplaysOnlyDeliberateSlowness: a saved timeline
// replays a rule's delay exactly, and not the time an answer took for
// other reasons: here a client that sent its body slowly (on a loaded
// host or through Redis the sandbox's own time stretches the same way).
// Replaying any slow answer as a delay would make an outage saved from a
// busy shared sandbox replay slowness it never had.
func TestTimelineFromJournalReplaysOnlyDeliberateSlowness(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	since := s.Clock.Now().UTC()

	body, err := json.Marshal(referralBody(fixtureTrialID))
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write(body[:len(body)/2])
		time.Sleep(300 * time.Millisecond) // the stimulus: a slow client, not a wait
		_, _ = pw.Write(body[len(body)/2:])
		_ = pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/referrals/", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("slowly sent referral: %d, want 201", resp.StatusCode)
	}
	s.advance(time.Minute)
	s.addRule(map[string]any{"endpoint": "api", "status": 503, "retryAfterSeconds": 7, "times": 1, "delay": map[string]any{"fixed": "120ms"}})
	wantForced(t, s.do(request{path: trialsPath, token: tok}), 503, "7")
	s.advance(time.Minute)

	window := map[string]any{"since": since.Format(referrals.TimestampLayout), "until": since.Add(3 * time.Minute).Format(referrals.TimestampLayout), "clientId": partner}
	if r := s.admin(http.MethodPost, "/__sandbox/library", map[string]any{"name": "deliberate-only", "fromJournal": window}); r.Status != http.StatusCreated {
		t.Fatalf("save from the journal: %d %s", r.Status, r.Body)
	}
	var saved scenarios.Scenario
	s.admin(http.MethodGet, "/__sandbox/library/deliberate-only", nil).decode(t, &saved)
	if len(saved.Rules) != 1 {
		t.Fatalf("saved %+v, want one API timeline", saved)
	}
	var delayed []scenarios.Phase
	for _, p := range saved.Rules[0].Timeline {
		if p.Delay != nil {
			delayed = append(delayed, p)
		}
	}
	if len(delayed) != 1 || delayed[0].Status != 503 || delayed[0].Delay.Fixed != scenarios.Duration(120*time.Millisecond) {
		t.Errorf("phases with a delay: %+v; want only the 503 with the rule's 120ms, not the slow upload's time", delayed)
	}
}

// TestDeleteSavedScenario: a saved scenario can be deleted, which switches
// it off first and frees its name; one that comes with the sandbox cannot,
// and an unknown name is a 404.
func TestDeleteSavedScenario(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	saved := map[string]any{"name": "team-outage", "description": "Saved to be deleted.", "rules": []any{map[string]any{"endpoint": "api", "status": 503}}}
	if r := s.admin(http.MethodPost, "/__sandbox/library", saved); r.Status != http.StatusCreated {
		t.Fatalf("save: %d %s", r.Status, r.Body)
	}
	s.activate("team-outage", "")
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("with the scenario on: %d, want 503", r.Status)
	}

	if r := s.admin(http.MethodDelete, "/__sandbox/library/saved/team-outage", nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s, want 204", r.Status, r.Body)
	}
	wantForced(t, s.do(request{path: trialsPath, token: tok}), 200, "")
	if r := s.admin(http.MethodGet, "/__sandbox/library/team-outage", nil); r.Status != http.StatusNotFound {
		t.Errorf("GET after delete: %d, want 404", r.Status)
	}
	var listed struct {
		Scenarios []struct{ Name string } `json:"scenarios"`
		Active    []struct{ Name string } `json:"active"`
	}
	s.admin(http.MethodGet, "/__sandbox/library", nil).decode(t, &listed)
	for _, sc := range append(listed.Scenarios, listed.Active...) {
		if sc.Name == "team-outage" {
			t.Errorf("the library still lists the deleted scenario: %+v", listed)
		}
	}
	if r := s.admin(http.MethodDelete, "/__sandbox/library/saved/team-outage", nil); r.Status != http.StatusNotFound {
		t.Errorf("delete again: %d, want 404", r.Status)
	}
	if r := s.admin(http.MethodDelete, "/__sandbox/library/saved/flaky", nil); r.Status != http.StatusConflict {
		t.Errorf("delete a scenario that comes with the sandbox: %d %s, want 409", r.Status, r.Body)
	}
	if r := s.admin(http.MethodPost, "/__sandbox/library", saved); r.Status != http.StatusCreated {
		t.Errorf("save the freed name again: %d %s", r.Status, r.Body)
	}
}
