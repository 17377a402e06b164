package console_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// phaseField is the CSS selector of one control of phase i (from 0) in the
// console's rule form.
func phaseField(i int, key string) string {
	return fmt.Sprintf(`#phase-list li[data-phase="%d"] [data-phase-field="%s"]`, i, key)
}

// fill sets a form control's value as a user's choice would, and fails
// when the control is missing or (for a select) does not offer the value.
func fill(t *testing.T, ctx context.Context, selector, value string) {
	t.Helper()
	ok := eval[bool](t, ctx, fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e) return false;
		e.value = %s; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true}));
		return e.value === %s; })()`, jsString(selector), jsString(value), jsString(value)))
	if !ok {
		t.Fatalf("set %s to %q: no such control or choice", selector, value)
	}
}

// fieldError is a JavaScript expression: the text of the error message
// the console shows next to the control at selector, "" when there is none
// or the control is not marked invalid and described by it.
func fieldError(selector string) string {
	return fmt.Sprintf(`(() => { const c = document.querySelector(%s); if (!c) return '';
		const ids = (c.getAttribute('aria-describedby') || '').split(' ').filter((id) => id.endsWith('-error-text'));
		const p = ids.length ? document.getElementById(ids[0]) : null;
		return p && (c.getAttribute('aria-invalid') === 'true' || c.tagName === 'BUTTON') ? p.textContent : ''; })()`, jsString(selector))
}

// activeRules is what GET /__sandbox/scenarios lists, as far as these
// tests look.
type activeRules struct {
	Rules []struct {
		ID       string  `json:"id"`
		Scenario string  `json:"scenario"`
		ClientID string  `json:"clientId"`
		Endpoint string  `json:"endpoint"`
		Status   int     `json:"status"`
		Times    int     `json:"times"`
		Timeline []phase `json:"timeline"`
	} `json:"rules"`
}

type phase struct {
	For               string  `json:"for"`
	Status            int     `json:"status"`
	RetryAfterSeconds int     `json:"retryAfterSeconds"`
	Probability       float64 `json:"probability"`
	Seed              uint64  `json:"seed"`
	Delay             *struct {
		Fixed string `json:"fixed"`
	} `json:"delay"`
}

// savedScenario is GET /__sandbox/library/{name}.
type savedScenario struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Rules       []struct {
		ID       string  `json:"id"`
		Endpoint string  `json:"endpoint"`
		Path     string  `json:"path"`
		Status   int     `json:"status"`
		Times    int     `json:"times"`
		Timeline []phase `json:"timeline"`
	} `json:"rules"`
}

// TestConsoleAuthorsTimelineRule builds a timeline rule in the console's
// form: phases added and removed, the rule's own effects switched off
// beside them, the sandbox's refusal of one phase's Retry-After shown next
// to that phase's field; once fixed, the sandbox holds the timeline with
// its phases and a partner's call gets the first phase's 503 with its
// Retry-After.
func TestConsoleAuthorsTimelineRule(t *testing.T) {
	_, base := newSandbox(t)
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "scenarios")
	waitFor(t, ctx, "the rule form's client list", `[...document.querySelectorAll('#rule-client option')].some(o => o.value === 'sandbox-partner')`)

	waitFor(t, ctx, "the form's phase editor", `!!document.getElementById('phase-add')`)
	fill(t, ctx, "#rule-endpoint", "api")
	fill(t, ctx, "#rule-client", "sandbox-partner")
	for i := 0; i < 3; i++ {
		do(t, ctx, "add a phase", chromedp.Click(chromedp.ID("phase-add")))
	}
	waitFor(t, ctx, "three phases, and the rule's own effects off", `document.querySelectorAll('#phase-list li').length === 3
		&& document.getElementById('rule-answer').disabled && document.getElementById('rule-times').disabled && document.getElementById('rule-retry').disabled`)
	if label := eval[string](t, ctx, `document.querySelector('label[for="' + document.querySelector('`+phaseField(2, "for")+`').id + '"]').textContent`); !strings.HasPrefix(label, "For") {
		t.Errorf("phase 3's for field is labelled %q, want For", label)
	}
	do(t, ctx, "remove phase 2", chromedp.Click(chromedp.CSS(`#phase-list li[data-phase="1"] button[data-action="remove-phase"]`)))
	waitFor(t, ctx, "two phases numbered 1 and 2", `[...document.querySelectorAll('#phase-list li .phase-edit-title')].map(h => h.textContent).join() === 'Phase 1,Phase 2'`)

	fill(t, ctx, phaseField(0, "for"), "5m")
	fill(t, ctx, phaseField(0, "answer"), "status:503")
	fill(t, ctx, phaseField(0, "retryAfterSeconds"), "30")
	fill(t, ctx, phaseField(1, "for"), "2m")
	fill(t, ctx, phaseField(1, "answer"), "status:500") // Retry-After only goes with 429 or 503
	fill(t, ctx, phaseField(1, "retryAfterSeconds"), "5")
	fill(t, ctx, phaseField(1, "probability"), "50")
	fill(t, ctx, phaseField(1, "seed"), "7")
	do(t, ctx, "add the rule", chromedp.Click(chromedp.CSS(`#rule-form button[type="submit"]`)))
	waitFor(t, ctx, "the refusal next to phase 2's Retry-After", fieldError(phaseField(1, "retryAfterSeconds"))+`.includes('429 or 503')`)
	if summary := eval[string](t, ctx, `document.getElementById('rule-form-error').textContent`); !strings.Contains(summary, "Phase 2") || !strings.Contains(summary, "timeline[1].retryAfterSeconds") {
		t.Errorf("the form's error summary reads %q, want it to name phase 2 and timeline[1].retryAfterSeconds", summary)
	}
	do(t, ctx, "scroll to the form", chromedp.Evaluate[chromedp.Void](`document.getElementById('rule-form-title').scrollIntoView()`))
	saveScreenshot(t, ctx, "console-authoring.png", true)
	var rules activeRules
	adminJSON(t, base, "/__sandbox/scenarios", &rules)
	if len(rules.Rules) != 0 {
		t.Fatalf("after the refusal the sandbox holds %+v, want no rule", rules.Rules)
	}

	fill(t, ctx, phaseField(1, "answer"), "status:429")
	do(t, ctx, "add the rule again", chromedp.Click(chromedp.CSS(`#rule-form button[type="submit"]`)))
	waitFor(t, ctx, "the timeline drawn with two phases", `document.querySelectorAll('#rules .timeline .phase').length === 2`)
	if eval[bool](t, ctx, `!!document.querySelector('#rule-form [aria-invalid]') || !!document.querySelector('#rule-form .field-error') || document.getElementById('rule-form-error').textContent !== ''`) {
		t.Error("the previous refusal is still shown after the rule was added")
	}

	adminJSON(t, base, "/__sandbox/scenarios", &rules)
	if len(rules.Rules) != 1 {
		t.Fatalf("the sandbox holds %d rules, want the one timeline", len(rules.Rules))
	}
	r := rules.Rules[0]
	if r.Endpoint != "api" || r.ClientID != "sandbox-partner" || r.Status != 0 || r.Times != 0 || len(r.Timeline) != 2 {
		t.Fatalf("the sandbox holds %+v, want an api timeline rule for sandbox-partner with two phases and no effects beside them", r)
	}
	if p := r.Timeline[0]; p.For != "5m0s" || p.Status != 503 || p.RetryAfterSeconds != 30 {
		t.Errorf("phase 1 is %+v, want 5m of 503 with Retry-After 30", p)
	}
	if p := r.Timeline[1]; p.For != "2m0s" || p.Status != 429 || p.RetryAfterSeconds != 5 || p.Probability != 0.5 || p.Seed != 7 {
		t.Errorf("phase 2 is %+v, want 2m of 429 with Retry-After 5, probability 0.5, seed 7", p)
	}

	tok := token(t, base, "sandbox-partner")
	status, header, body := send(t, base, call{path: "/api/v1/referrals/trials", token: tok})
	if status != http.StatusServiceUnavailable || header.Get("Retry-After") != "30" {
		t.Errorf("a partner's call in phase 1: %d Retry-After %q %s, want 503 with Retry-After 30", status, header.Get("Retry-After"), body)
	}
	tok2 := token(t, base, "sandbox-partner-2")
	if status, _, body := send(t, base, call{path: "/api/v1/referrals/trials", token: tok2}); status != http.StatusOK {
		t.Errorf("another partner's call: %d %s, want 200 (the rule is bound to sandbox-partner)", status, body)
	}
}

// TestConsoleSavesBuiltRuleAsScenario saves the rule built in the form as a
// named scenario: a bad name is refused next to the name field; a good one
// is stored as built, listed with its Delete button, switches on to give a
// partner the outage, and deletes from the console.
func TestConsoleSavesBuiltRuleAsScenario(t *testing.T) {
	_, base := newSandbox(t)
	ctx := newBrowser(t, narrowWidth, narrowHeight)
	openConsole(t, ctx, base, "scenarios")

	waitFor(t, ctx, "the form's phase editor", `!!document.getElementById('phase-add')`)
	fill(t, ctx, "#rule-endpoint", "service")
	do(t, ctx, "add a phase", chromedp.Click(chromedp.ID("phase-add")))
	do(t, ctx, "add a second phase", chromedp.Click(chromedp.ID("phase-add")))
	fill(t, ctx, phaseField(0, "for"), "10m")
	fill(t, ctx, phaseField(0, "answer"), "status:503")
	fill(t, ctx, phaseField(0, "retryAfterSeconds"), "60")
	fill(t, ctx, phaseField(1, "for"), "5m")
	fill(t, ctx, phaseField(1, "answer"), "")
	fill(t, ctx, phaseField(1, "delay"), "800")
	if width := eval[int](t, ctx, `document.documentElement.scrollWidth`); width > narrowWidth {
		t.Errorf("the scenarios view with two phases is %dpx wide in a %dpx window: it scrolls sideways", width, narrowWidth)
	}
	saveScreenshot(t, ctx, "console-narrow-authoring.png", false)

	fill(t, ctx, "#save-name", "Console Incident")
	fill(t, ctx, "#save-description", "Ten minutes down, then slow.")
	do(t, ctx, "save with a bad name", chromedp.Click(chromedp.CSS(`#save-form button[type="submit"]`)))
	waitFor(t, ctx, "the refusal next to the name", fieldError("#save-name")+` !== ''`)
	if focused := eval[string](t, ctx, `document.activeElement.id`); focused != "save-name" {
		t.Errorf("after the refusal the focus is on %q, want the name field", focused)
	}
	if status, _, _ := send(t, base, call{path: "/__sandbox/library/Console%20Incident"}); status != http.StatusNotFound {
		t.Errorf("the refused scenario is in the library: %d", status)
	}

	fill(t, ctx, "#save-name", "console-incident")
	do(t, ctx, "save as scenario", chromedp.Click(chromedp.CSS(`#save-form button[type="submit"]`)))
	item := `#scenario-list li[data-scenario="console-incident"]`
	waitFor(t, ctx, "the saved scenario listed with its Delete button", `!!document.querySelector('`+item+` button[data-action="delete-saved"]')`)
	if eval[bool](t, ctx, `!!document.querySelector('#save-form [aria-invalid]') || document.getElementById('save-form-error').textContent !== ''`) {
		t.Error("the refusal is still shown after the scenario was saved")
	}

	var sc savedScenario
	adminJSON(t, base, "/__sandbox/library/console-incident", &sc)
	if sc.Description != "Ten minutes down, then slow." || len(sc.Rules) != 1 || sc.Rules[0].Endpoint != "service" || len(sc.Rules[0].Timeline) != 2 {
		t.Fatalf("the library holds %+v, want the service timeline with two phases and the description", sc)
	}
	if p := sc.Rules[0].Timeline[0]; p.Status != 503 || p.RetryAfterSeconds != 60 || p.For != "10m0s" {
		t.Errorf("saved phase 1 is %+v, want 10m of 503 with Retry-After 60", p)
	}
	if p := sc.Rules[0].Timeline[1]; p.Status != 0 || p.Delay == nil || p.Delay.Fixed != "800ms" {
		t.Errorf("saved phase 2 is %+v, want a fixed delay of 800ms", p)
	}
	var rules activeRules
	adminJSON(t, base, "/__sandbox/scenarios", &rules)
	if len(rules.Rules) != 0 {
		t.Errorf("saving switched rules on: %+v; a saved scenario is off until switched on", rules.Rules)
	}

	do(t, ctx, "switch the saved scenario on", chromedp.Click(chromedp.CSS(item+` button[data-action="toggle"]`)))
	waitFor(t, ctx, "the saved scenario on", `document.querySelector('`+item+` button[data-action="toggle"]').getAttribute('aria-pressed') === 'true'`)
	tok := token(t, base, "sandbox-partner")
	status, header, body := send(t, base, call{path: "/api/v1/referrals/trials", token: tok})
	if status != http.StatusServiceUnavailable || header.Get("Retry-After") != "60" {
		t.Errorf("a partner's call with the saved scenario on: %d Retry-After %q %s, want 503 with Retry-After 60", status, header.Get("Retry-After"), body)
	}

	do(t, ctx, "accept the confirmation", chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`))
	do(t, ctx, "delete the saved scenario", chromedp.Click(chromedp.CSS(item+` button[data-action="delete-saved"]`)))
	waitFor(t, ctx, "the scenario gone from the list", `!document.querySelector('`+item+`')`)
	if status, _, body := send(t, base, call{path: "/__sandbox/library/console-incident"}); status != http.StatusNotFound {
		t.Errorf("GET the deleted scenario: %d %s, want 404", status, body)
	}
	if status, _, body := send(t, base, call{path: "/api/v1/referrals/trials", token: tok}); status != http.StatusOK {
		t.Errorf("a partner's call after the delete: %d %s, want 200", status, body)
	}
}

// TestConsoleSavesActiveCustomRules saves the rules added one by one as a
// named scenario: a missing description is refused next to its field; the
// rules a switched-on scenario brought are left out, and the saved rules
// hold what was added, without the sandbox's ids and counters.
func TestConsoleSavesActiveCustomRules(t *testing.T) {
	_, base := newSandbox(t)
	for _, r := range []string{
		`{"endpoint": "token", "status": 503, "retryAfterSeconds": 20, "times": 2}`,
		`{"endpoint": "api", "path": "/api/v1/referrals/trials", "timeline": [{"for": "1m", "status": 500}, {"for": "1m", "delay": {"fixed": "300ms"}}]}`,
	} {
		if status, _, body := send(t, base, call{method: http.MethodPost, path: "/__sandbox/scenarios", contentType: "application/json", body: r}); status != http.StatusCreated {
			t.Fatalf("add a rule: %d %s", status, body)
		}
	}
	if status, _, body := send(t, base, call{method: http.MethodPost, path: "/__sandbox/library/maintenance-window", contentType: "application/json", body: `{}`}); status != http.StatusCreated {
		t.Fatalf("switch on maintenance-window: %d %s", status, body)
	}
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "scenarios")
	waitFor(t, ctx, "two active custom rules counted", `document.getElementById('save-active-count').textContent === '2'`)

	do(t, ctx, "choose the active custom rules", chromedp.Click(chromedp.ID("save-source-active")))
	fill(t, ctx, "#save-name", "two-custom-rules")
	do(t, ctx, "save without a description", chromedp.Click(chromedp.CSS(`#save-form button[type="submit"]`)))
	waitFor(t, ctx, "the refusal next to the description", fieldError("#save-description")+` === 'required'`)
	fill(t, ctx, "#save-description", "A token outage and a slow trials list.")
	do(t, ctx, "save again", chromedp.Click(chromedp.CSS(`#save-form button[type="submit"]`)))
	waitFor(t, ctx, "the saved scenario listed", `!!document.querySelector('#scenario-list li[data-scenario="two-custom-rules"] button[data-action="delete-saved"]')`)

	var sc savedScenario
	adminJSON(t, base, "/__sandbox/library/two-custom-rules", &sc)
	if len(sc.Rules) != 2 {
		t.Fatalf("the library holds %d rules, want the 2 custom ones (not maintenance-window's): %+v", len(sc.Rules), sc.Rules)
	}
	token, api := sc.Rules[0], sc.Rules[1]
	if token.Endpoint == "api" {
		token, api = api, token
	}
	if token.ID != "" || token.Endpoint != "token" || token.Status != 503 || token.Times != 2 {
		t.Errorf("saved token rule %+v, want 503 twice on the token endpoint, without an id", token)
	}
	if api.Path != "/api/v1/referrals/trials" || len(api.Timeline) != 2 || api.Timeline[0].Status != 500 || api.Timeline[1].Delay == nil {
		t.Errorf("saved api rule %+v, want the two-phase timeline on the trials path", api)
	}
}
