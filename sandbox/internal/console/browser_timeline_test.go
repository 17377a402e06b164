package console_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleDrawsTimelineAndJumpsToNextPhase adds a timeline bound to one
// client, finds it drawn with its phases and a marker for now, and jumps
// through it with the console's button: each click moves that client's own
// clock (never the sandbox's) to the next phase, and the last one retires
// the rule.
func TestConsoleDrawsTimelineAndJumpsToNextPhase(t *testing.T) {
	_, base := newSandbox(t)
	rule := `{"endpoint": "api", "clientId": "sandbox-partner-2", "timeline": [
		{"for": "5m", "status": 503, "retryAfterSeconds": 30},
		{"for": "2m", "status": 429, "retryAfterSeconds": 5},
		{"for": "10m", "delay": {"fixed": "20ms"}}]}`
	status, _, body := send(t, base, call{method: http.MethodPost, path: "/__sandbox/scenarios", contentType: "application/json", body: rule})
	if status != http.StatusCreated {
		t.Fatalf("add the timeline rule: %d %s", status, body)
	}
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "scenarios")

	current := func(phase int) string {
		return fmt.Sprintf(`(() => { const c = document.querySelectorAll('#rules .timeline .phase-current'); return c.length === 1 && c[0].dataset.phase === '%d'; })()`, phase)
	}
	waitFor(t, ctx, "the timeline drawn at its first phase", current(0)+` && document.querySelectorAll('#rules .timeline .phase').length === 3 && !!document.querySelector('#rules .timeline-now')`)
	saveScreenshot(t, ctx, "console-timeline.png", false)
	if left := eval[float64](t, ctx, `parseFloat(document.querySelector('#rules .timeline-now').style.left)`); left < 0 || left > 5 {
		t.Errorf("marker for now at %v%%, want near the start of a 17-minute timeline", left)
	}
	var rules struct {
		Rules []struct {
			TimelineNow *struct {
				Phase int `json:"phase"`
			} `json:"timelineNow"`
		} `json:"rules"`
	}
	for phase := 1; phase <= 2; phase++ {
		do(t, ctx, fmt.Sprintf("jump to phase %d", phase+1), chromedp.Click(chromedp.CSS(`#rules button[data-action="next-phase"]`)))
		waitFor(t, ctx, fmt.Sprintf("phase %d current", phase+1), current(phase))
		adminJSON(t, base, "/__sandbox/scenarios", &rules)
		if len(rules.Rules) != 1 || rules.Rules[0].TimelineNow == nil || rules.Rules[0].TimelineNow.Phase != phase {
			t.Fatalf("after the jump the sandbox lists %+v, want the timeline in phase %d", rules.Rules, phase)
		}
	}
	var clock struct {
		Real bool `json:"real"`
	}
	adminJSON(t, base, "/__sandbox/clock", &clock)
	if !clock.Real {
		t.Error("a jump along a client's timeline moved the sandbox clock; it must move that client's clock only")
	}
	do(t, ctx, "end the timeline", chromedp.Click(chromedp.CSS(`#rules button[data-action="next-phase"]`)))
	waitFor(t, ctx, "the rule retired", `document.querySelectorAll('#rules tr[data-rule-id]').length === 0`)
	tok := token(t, base, "sandbox-partner-2")
	if status, _, body := send(t, base, call{path: "/api/v1/referrals/trials", token: tok}); status != http.StatusOK {
		t.Errorf("after the timeline ended: %d %s, want 200", status, body)
	}
}

// TestConsoleShowsPersonaMoving submits a persona referral through the API,
// finds it marked in the console's data view with the persona table, moves
// the partner's clock with the console's buttons, and sees the status move
// and the audit trail explain it.
func TestConsoleShowsPersonaMoving(t *testing.T) {
	_, base := newSandbox(t)
	tok := token(t, base, "sandbox-partner")
	const esid = "console-persona-1"
	status, _, body := send(t, base, call{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: tok, contentType: "application/json",
		body: `{"externalSourceId": "` + esid + `", "patient": {"firstName": "Accepted", "lastName": "Persona", "dateOfBirth": "1980-04-12", "gender": "female"}}`})
	if status != http.StatusCreated {
		t.Fatalf("submit the persona: %d %s", status, body)
	}
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "data")
	row := fmt.Sprintf(`#qualified tr[data-external-source-id=%s]`, jsString(esid))
	badge := fmt.Sprintf(`document.querySelector(%s).textContent`, jsString(row+` .badge`))
	waitFor(t, ctx, "the persona table and the persona's row", fmt.Sprintf(
		`document.querySelectorAll('#personas tr[data-persona]').length === 5 && !!document.querySelector(%s) && %s === 'received'`,
		jsString(row+` .chip.persona`), badge))

	do(t, ctx, "move the partner's clock one hour", chromedp.Click(chromedp.ID("data-clock-1h")))
	waitFor(t, ctx, "the persona in review", badge+` === 'reviewing'`)
	do(t, ctx, "move the partner's clock one day", chromedp.Click(chromedp.ID("data-clock-1d")))
	waitFor(t, ctx, "the persona accepted", badge+` === 'accepted'`)

	do(t, ctx, "open the audit trail", chromedp.Click(chromedp.CSS(row+` button[aria-expanded]`)))
	waitFor(t, ctx, "two moves by sandbox-persona in the trail",
		`[...document.querySelectorAll('#qualified .audit li.audit-status-changed')].filter(li => li.textContent.includes('sandbox-persona')).length === 2`)
	var clock struct {
		Real bool `json:"real"`
	}
	adminJSON(t, base, "/__sandbox/clock", &clock)
	if !clock.Real {
		t.Error("the partner clock buttons moved the sandbox clock; they must move the partner's own")
	}
	noStrayNull(t, ctx)
	saveScreenshot(t, ctx, "console-personas.png", false)
}

// TestConsoleShowsEndedScenarioAsEnded switches on a timed scenario, moves
// the sandbox clock past its window, and finds the console showing it as
// ended with its toggle back to "Switch on", not as still on.
func TestConsoleShowsEndedScenarioAsEnded(t *testing.T) {
	_, base := newSandbox(t)
	if status, _, body := send(t, base, call{method: http.MethodPost, path: "/__sandbox/library/maintenance-window", contentType: "application/json", body: `{}`}); status != http.StatusCreated {
		t.Fatalf("switch on maintenance-window: %d %s", status, body)
	}
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "scenarios")
	pressed := `document.querySelector('#scenario-list li[data-scenario="maintenance-window"] button[data-action="toggle"]')?.getAttribute('aria-pressed')`
	waitFor(t, ctx, "the scenario shown on", pressed+` === 'true'`)
	if status, _, body := send(t, base, call{method: http.MethodPost, path: "/__sandbox/clock", contentType: "application/json", body: `{"advance": "30m"}`}); status != http.StatusOK {
		t.Fatalf("advance the clock: %d %s", status, body)
	}
	waitFor(t, ctx, "the scenario shown ended", pressed+` === 'false' && !!document.querySelector('#scenario-list li[data-scenario="maintenance-window"] .chip.ended')`)
}

// TestConsoleDeletesSavedScenario finds a Delete button on a scenario saved
// through the admin API, and none on the built-in ones; deleting it takes
// it out of the console and the library.
func TestConsoleDeletesSavedScenario(t *testing.T) {
	_, base := newSandbox(t)
	saved := `{"name": "team-outage", "description": "Saved in the test.", "rules": [{"endpoint": "api", "status": 503}]}`
	if status, _, body := send(t, base, call{method: http.MethodPost, path: "/__sandbox/library", contentType: "application/json", body: saved}); status != http.StatusCreated {
		t.Fatalf("save a scenario: %d %s", status, body)
	}
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "scenarios")
	item := func(name string) string { return `#scenario-list li[data-scenario="` + name + `"]` }
	waitFor(t, ctx, "the saved scenario with a Delete button", `!!document.querySelector('`+item("team-outage")+` button[data-action="delete-saved"]')`)
	if eval[bool](t, ctx, `!!document.querySelector('`+item("flaky")+` button[data-action="delete-saved"]')`) {
		t.Error("a built-in scenario has a Delete button")
	}
	do(t, ctx, "accept the confirmation", chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`))
	do(t, ctx, "delete it", chromedp.Click(chromedp.CSS(item("team-outage")+` button[data-action="delete-saved"]`)))
	waitFor(t, ctx, "the scenario gone from the list", `!document.querySelector('`+item("team-outage")+`') && !!document.querySelector('`+item("flaky")+`')`)
	if status, _, body := send(t, base, call{path: "/__sandbox/library/team-outage"}); status != http.StatusNotFound {
		t.Errorf("GET the deleted scenario: %d %s, want 404", status, body)
	}
}
