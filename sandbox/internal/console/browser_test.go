package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestConsoleSwitchesScenarioOn clicks a named scenario's button and checks
// that the API really fails for a client, and that the console shows the
// rule counting down; then adds a custom rule from the form.
func TestConsoleSwitchesScenarioOn(t *testing.T) {
	_, base := newSandbox(t)
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "scenarios")

	toggle := `button[data-action="toggle"][data-scenario="api-unavailable-then-recovers"]`
	waitFor(t, ctx, "the scenario library", fmt.Sprintf(`!!document.querySelector(%s)`, jsString(toggle)))
	do(t, ctx, "click the scenario's button", chromedp.Click(chromedp.CSS(toggle)))
	waitFor(t, ctx, "the scenario to show as on",
		fmt.Sprintf(`document.querySelector(%s).getAttribute('aria-pressed') === 'true' && document.querySelectorAll('#rules tr[data-rule-id]').length === 1`, jsString(toggle)))

	tok := token(t, base, "sandbox-partner")
	status, header, body := send(t, base, call{path: "/api/v1/referrals/trials", token: tok})
	if status != http.StatusServiceUnavailable || header.Get("Retry-After") != "1" {
		t.Fatalf("trials after switching the scenario on: %d Retry-After %q %s, want 503 with Retry-After 1", status, header.Get("Retry-After"), body)
	}
	waitFor(t, ctx, "the rule's remaining count to drop to 2",
		`[...document.querySelectorAll('#rules tr[data-rule-id] td')].some((td, i) => i === 3 && td.textContent === '2')`)

	// A custom rule from the form: the next two qualified-referral calls of
	// sandbox-partner-2 answer 429.
	do(t, ctx, "fill in the custom rule form",
		chromedp.SetValue(chromedp.ID("rule-endpoint"), "api"),
		chromedp.SetValue(chromedp.ID("rule-path"), "/api/v1/referrals/qualified"),
		chromedp.SetValue(chromedp.ID("rule-client"), "sandbox-partner-2"),
		chromedp.SetValue(chromedp.ID("rule-answer"), "status:429"),
		chromedp.SetValue(chromedp.ID("rule-times"), "2"),
		chromedp.SetValue(chromedp.ID("rule-retry"), "5"),
		chromedp.SetValue(chromedp.ID("rule-description"), "partner 2 is throttled"),
		chromedp.Click(chromedp.CSS(`#rule-form button[type=submit]`)),
	)
	waitFor(t, ctx, "the custom rule in the table", `document.querySelectorAll('#rules tr[data-rule-id]').length === 2`)
	var rules struct {
		Rules []struct {
			ClientID          string `json:"clientId"`
			Path              string `json:"path"`
			Status            int    `json:"status"`
			Times             int    `json:"times"`
			RetryAfterSeconds int    `json:"retryAfterSeconds"`
		} `json:"rules"`
	}
	adminJSON(t, base, "/__sandbox/scenarios", &rules)
	if len(rules.Rules) != 2 {
		t.Fatalf("%d active rules, want 2: %+v", len(rules.Rules), rules.Rules)
	}
	if r := rules.Rules[1]; r.ClientID != "sandbox-partner-2" || r.Path != "/api/v1/referrals/qualified" || r.Status != 429 || r.Times != 2 || r.RetryAfterSeconds != 5 {
		t.Errorf("rule from the form = %+v", r)
	}
	saveScreenshot(t, ctx, "console-scenarios.png", true)

	do(t, ctx, "clear all rules", chromedp.Click(chromedp.ID("rules-clear")))
	waitFor(t, ctx, "the rules to be cleared", `document.querySelectorAll('#rules tr[data-rule-id]').length === 0`)
	if status, _, body := send(t, base, call{path: "/api/v1/referrals/trials", token: tok}); status != http.StatusOK {
		t.Errorf("trials after clearing: %d %s, want 200", status, body)
	}
}

// TestConsoleJournalShowsNewRequests makes requests while the journal is
// open and checks they appear without a reload, coloured by status, and that
// a row's details show the entry without the token.
func TestConsoleJournalShowsNewRequests(t *testing.T) {
	_, base := newSandbox(t)
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "journal")
	waitFor(t, ctx, "the journal's first poll", `document.getElementById('journal-state').textContent === 'live'`)

	tok := token(t, base, "sandbox-partner")
	const okID, failID = "console-test-ok-1", "console-test-503-1"
	send(t, base, call{path: "/health/ping", token: tok})
	send(t, base, call{path: "/api/v1/referrals/trials", token: tok, headers: map[string]string{"X-Request-Id": okID}})
	send(t, base, call{path: "/api/v1/referrals/?limit=2", token: tok})
	send(t, base, call{path: "/api/v1/referrals/qualified/no-such-id", token: tok})
	send(t, base, call{method: http.MethodPost, path: "/api/v1/referrals/", token: tok, contentType: "application/json",
		body: `{"trialId": "TRIAL-CARDIO-001", "patient": {"firstName": "Bo", "lastName": "Diaz", "dateOfBirth": "1975-13-02", "gender": "M"}}`})
	send(t, base, call{path: "/api/v1/referrals/trials", token: tok,
		headers: map[string]string{"X-Request-Id": failID, "X-Sandbox-Force-Status": "503"}})

	row := func(id string) string {
		return fmt.Sprintf(`document.querySelector('#journal-rows tr[data-request-id=%s]')`, jsString(id))
	}
	waitFor(t, ctx, "the new requests in the journal", row(okID)+` && `+row(failID))
	if got := eval[string](t, ctx, row(okID)+`.className`); !strings.Contains(got, "st-2xx") {
		t.Errorf("200 row class %q, want st-2xx", got)
	}
	if got := eval[string](t, ctx, row(failID)+`.className`); !strings.Contains(got, "st-5xx") {
		t.Errorf("503 row class %q, want st-5xx", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('#journal-rows tr:first-child').dataset.requestId`); got != failID {
		t.Errorf("first row is %q, want the newest request %q", got, failID)
	}

	// Filters: status class, then client.
	do(t, ctx, "filter by status", chromedp.SendKeys(chromedp.ID("filter-status"), "5xx"))
	waitFor(t, ctx, "only 5xx rows", `[...document.querySelectorAll('#journal-rows tr')].every(tr => tr.dataset.statusClass === '5xx') && document.querySelectorAll('#journal-rows tr').length === 1`)
	do(t, ctx, "clear the status filter", chromedp.Evaluate[chromedp.Void](
		`(f => { f.value = ''; f.dispatchEvent(new Event('input')); })(document.getElementById('filter-status'))`))
	waitFor(t, ctx, "every row back", `document.querySelectorAll('#journal-rows tr').length >= 6`)

	do(t, ctx, "open the 503's details", chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-request-id=%s] .row-button`, jsString(failID)))))
	waitFor(t, ctx, "the details panel", fmt.Sprintf(`document.getElementById('journal-details').textContent.includes(%s)`, jsString(failID)))
	details := eval[string](t, ctx, `document.getElementById('journal-details').textContent`)
	if strings.Contains(details, tok) || strings.Contains(details, tok[len(tok)-20:]) {
		t.Error("the details panel shows the bearer token; the journal must redact it")
	}
	for _, want := range []string{"sandbox-partner", "/api/v1/referrals/trials", "X-Sandbox-Force-Status"} {
		if !strings.Contains(details, want) {
			t.Errorf("details panel lacks %q:\n%s", want, details)
		}
	}
	noStrayNull(t, ctx)
	saveScreenshot(t, ctx, "console-journal.png", true)
}

// TestConsoleReportShowsFailingCheck makes a client misbehave, then opens
// the report view and finds a failing check for that client.
func TestConsoleReportShowsFailingCheck(t *testing.T) {
	_, base := newSandbox(t)
	ctx := newBrowser(t, desktopWidth, desktopHeight)

	// sandbox-partner misbehaves: its secret in a query string, and a POST
	// that does not declare JSON.
	secretInQuery := url.Values{"client_secret": {"sandbox-partner-secret"}}.Encode()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"sandbox-partner"}, "scope": {"api://referrals-sandbox/.default"}}
	send(t, base, call{method: http.MethodPost, path: "/oauth2/v2.0/token?" + secretInQuery,
		contentType: "application/x-www-form-urlencoded", body: form.Encode()})
	tok := token(t, base, "sandbox-partner")
	send(t, base, call{path: "/api/v1/referrals/trials", token: tok})
	send(t, base, call{method: http.MethodPost, path: "/api/v1/referrals/", token: tok, contentType: "text/plain",
		body: `{"trialId": "TRIAL-CARDIO-001", "patient": {"firstName": "Bo", "lastName": "Diaz", "dateOfBirth": "1975-11-02", "gender": "male"}}`})
	// sandbox-partner-2 behaves, for contrast.
	tok2 := token(t, base, "sandbox-partner-2")
	send(t, base, call{path: "/health/ping", token: tok2})
	send(t, base, call{path: "/api/v1/referrals/trials", token: tok2})

	openConsole(t, ctx, base, "report")
	card := `section.report-client[data-client-id="sandbox-partner"]`
	waitFor(t, ctx, "a failing check for sandbox-partner",
		fmt.Sprintf(`!!document.querySelector(%s)`, jsString(card+` li.check.result-fail`)))
	title := eval[string](t, ctx, fmt.Sprintf(`document.querySelector(%s).textContent`, jsString(card+` li.check.result-fail .badge`)))
	if !strings.EqualFold(title, "fail") {
		t.Errorf("failing check's badge reads %q, want fail", title)
	}
	saveScreenshot(t, ctx, "console-report.png", true)
}

// TestConsoleMovesRecordStatus moves a qualified referral and a referral
// from the data view and checks the store, and that the audit trail shows
// the move.
func TestConsoleMovesRecordStatus(t *testing.T) {
	_, base := newSandbox(t)
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "data")

	const esid = "src-b659f7ea79aaa166"
	const outcomesID = "9635e059-4979-40b3-ba80-bba16cb9e0ed"
	qrow := fmt.Sprintf(`#qualified tr[data-external-source-id=%s]`, jsString(esid))
	rrow := fmt.Sprintf(`#referrals tr[data-outcomes-id=%s]`, jsString(outcomesID))
	waitFor(t, ctx, "the partner's records", fmt.Sprintf(`!!document.querySelector(%s) && !!document.querySelector(%s)`, jsString(qrow), jsString(rrow)))
	if n := eval[int](t, ctx, `document.querySelectorAll('#trials tbody tr').length`); n != 5 {
		t.Errorf("%d trials shown, want all 5 (listed or not)", n)
	}
	moves := eval[string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll(%s)].map(b => b.dataset.move).join(',')`, jsString(qrow+` button[data-move]`)))
	if moves != "reviewing,rejected,withdrawn" {
		t.Errorf("moves offered for a received record: %q", moves)
	}

	do(t, ctx, "move the qualified referral to reviewing", chromedp.Click(chromedp.CSS(qrow+` button[data-move="reviewing"]`)))
	waitFor(t, ctx, "the qualified referral in reviewing", fmt.Sprintf(`document.querySelector(%s).textContent.includes('reviewing') && !document.querySelector(%s)`,
		jsString(qrow+` .badge`), jsString(qrow+` button[data-move="reviewing"]`)))
	do(t, ctx, "move the referral to rejected", chromedp.Click(chromedp.CSS(rrow+` button[data-move="rejected"]`)))
	waitFor(t, ctx, "the referral rejected", fmt.Sprintf(`document.querySelector(%s).textContent === 'rejected'`, jsString(rrow+` .badge`)))

	do(t, ctx, "open the audit trail", chromedp.Click(chromedp.CSS(qrow+` button[aria-expanded]`)))
	waitFor(t, ctx, "the audit trail with the move", `!!document.querySelector('#qualified .audit li.audit-status-changed')`)

	var qualified struct {
		QualifiedReferrals []struct {
			ExternalSourceID string   `json:"externalSourceId"`
			Status           string   `json:"status"`
			NextStatuses     []string `json:"nextStatuses"`
			AuditTrail       []struct {
				Action string `json:"action"`
			} `json:"auditTrail"`
		} `json:"qualifiedReferrals"`
	}
	adminJSON(t, base, "/__sandbox/data/qualified?clientId=sandbox-partner", &qualified)
	for _, q := range qualified.QualifiedReferrals {
		if q.ExternalSourceID != esid {
			continue
		}
		if q.Status != "reviewing" || len(q.AuditTrail) != 2 || q.AuditTrail[1].Action != "status-changed" {
			t.Errorf("after the move: %+v, want reviewing with a status-changed audit entry and no viewed entries", q)
		}
	}
	noStrayNull(t, ctx)
	do(t, ctx, "scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	saveScreenshot(t, ctx, "console-data.png", false)
}

// TestConsoleMovesTheClock advances the sandbox clock with the presets and
// goes back to real time.
func TestConsoleMovesTheClock(t *testing.T) {
	_, base := newSandbox(t)
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "scenarios")
	var clock struct {
		Offset string `json:"offset"`
		Real   bool   `json:"real"`
	}
	steps := []struct {
		button, wantOffset string
	}{
		{"clock-1h", "1h0m0s"},
		{"clock-1m", "1h1m0s"},
		{"clock-reset", "0s"},
	}
	for _, step := range steps {
		do(t, ctx, "click "+step.button, chromedp.Click(chromedp.ID(step.button)))
		want := "+" + step.wantOffset
		if step.wantOffset == "0s" {
			want = "real time"
		}
		waitFor(t, ctx, "the clock to show "+want, fmt.Sprintf(`document.getElementById('clock-offset').textContent === %s`, jsString(want)))
		adminJSON(t, base, "/__sandbox/clock", &clock)
		if clock.Offset != step.wantOffset {
			t.Errorf("after %s: offset %q, want %q", step.button, clock.Offset, step.wantOffset)
		}
	}
}

// TestConsoleIsKeyboardUsable checks that every visible control has an
// accessible name and that the tabs and buttons work from the keyboard.
func TestConsoleIsKeyboardUsable(t *testing.T) {
	_, base := newSandbox(t)
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "scenarios")
	waitFor(t, ctx, "the scenario library", `document.querySelectorAll('#scenario-list button').length > 5`)

	unnamed := eval[[]string](t, ctx, `[...document.querySelectorAll('button, input, select, a[href]')]
		.filter(e => e.offsetParent !== null)
		.filter(e => !(e.getAttribute('aria-label') || (e.labels && e.labels.length) || e.textContent.trim()))
		.map(e => e.outerHTML.slice(0, 120))`)
	if len(unnamed) > 0 {
		t.Errorf("controls without an accessible name: %q", unnamed)
	}

	do(t, ctx, "open the journal tab with the keyboard", chromedp.Focus(chromedp.ID("tab-journal")), chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, "the journal view", `!document.getElementById('view-journal').hidden && document.getElementById('view-scenarios').hidden`)

	do(t, ctx, "back to scenarios", chromedp.Focus(chromedp.ID("tab-scenarios")), chromedp.KeyEvent(kb.Enter))
	toggle := `button[data-action="toggle"][data-scenario="permissions-revoked"]`
	// A hidden view's buttons cannot take the focus: wait until the view
	// the Enter opened is shown.
	waitFor(t, ctx, "the scenarios view", fmt.Sprintf(`!document.getElementById('view-scenarios').hidden && document.querySelector(%s)?.offsetParent != null`, jsString(toggle)))
	do(t, ctx, "switch a scenario on with the keyboard", chromedp.Focus(chromedp.CSS(toggle)), chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, "the scenario on", fmt.Sprintf(`document.querySelector(%s).getAttribute('aria-pressed') === 'true'`, jsString(toggle)))

	// A refresh that redraws the library keeps the focus where it was.
	flaky := `button[data-action="toggle"][data-scenario="flaky"]`
	do(t, ctx, "focus another scenario's button", chromedp.Focus(chromedp.CSS(flaky)))
	if status, _, body := send(t, base, call{method: http.MethodPost, path: "/__sandbox/library/rate-limited", contentType: "application/json", body: `{}`}); status != http.StatusCreated {
		t.Fatalf("activate rate-limited: %d %s", status, body)
	}
	waitFor(t, ctx, "the refresh showing rate-limited on",
		`document.querySelector('button[data-action="toggle"][data-scenario="rate-limited"]').getAttribute('aria-pressed') === 'true'`)
	if got := eval[string](t, ctx, `document.activeElement.dataset.scenario || document.activeElement.outerHTML.slice(0, 80)`); got != "flaky" {
		t.Errorf("after a refresh the focus is on %q, want the flaky button it was on", got)
	}

	// Tab moves focus forward through real controls, never stuck on one.
	do(t, ctx, "tab from the skip link", chromedp.Focus(chromedp.CSS(".skip-link")), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab))
	if got := eval[string](t, ctx, `document.activeElement.id`); got != "clock-1h" {
		t.Errorf("two tabs after the skip link focus %q, want clock-1h (the second clock button)", got)
	}
}

// TestConsoleNarrowWindow checks that no view scrolls sideways in a phone-
// sized window.
func TestConsoleNarrowWindow(t *testing.T) {
	_, base := newSandbox(t)
	tok := token(t, base, "sandbox-partner")
	send(t, base, call{path: "/api/v1/referrals/trials", token: tok})
	ctx := newBrowser(t, narrowWidth, narrowHeight)
	openConsole(t, ctx, base, "scenarios")
	waitFor(t, ctx, "the scenario library", `document.querySelectorAll('#scenario-list li').length > 5`)
	for _, view := range []string{"journal", "data", "clients", "report", "scenarios"} {
		do(t, ctx, "open "+view, chromedp.Evaluate[chromedp.Void](`location.hash = '#`+view+`'`))
		waitFor(t, ctx, view+" view", `!document.getElementById('view-`+view+`').hidden`)
		if view == "data" {
			waitFor(t, ctx, "records", `document.querySelectorAll('#qualified tbody tr').length > 0`)
		}
		width := eval[int](t, ctx, `document.documentElement.scrollWidth`)
		if width > narrowWidth {
			t.Errorf("%s view is %dpx wide in a %dpx window: it scrolls sideways", view, width, narrowWidth)
		}
		saveScreenshot(t, ctx, "console-narrow-"+view+".png", false)
	}
	saveScreenshot(t, ctx, "console-narrow.png", true)
}

// noStrayNull fails when the page prints "null" or "undefined": a value the
// script rendered without checking it was there.
func noStrayNull(t *testing.T, ctx context.Context) {
	t.Helper()
	text := eval[string](t, ctx, `document.querySelector('main').innerText`)
	for _, word := range []string{"null", "undefined", "NaN", "[object Object]"} {
		if strings.Contains(text, word) {
			t.Errorf("the page shows %q:\n%s", word, text)
		}
	}
}

// TestConsoleJournalMarksAClientsOwnClock: an entry of a client whose own
// clock is ahead of the sandbox's is marked with that offset in the
// journal, and an entry on the sandbox's clock is not, so the two are not
// read as times on one clock.
func TestConsoleJournalMarksAClientsOwnClock(t *testing.T) {
	_, base := newSandbox(t)
	if status, _, body := send(t, base, call{method: http.MethodPost, path: "/__sandbox/clock", contentType: "application/json",
		body: `{"clientId": "sandbox-partner-2", "advance": "1m50s"}`}); status != http.StatusOK {
		t.Fatalf("move sandbox-partner-2's clock: %d %s", status, body)
	}
	ahead, plain := token(t, base, "sandbox-partner-2"), token(t, base, "sandbox-partner")
	send(t, base, call{path: "/api/v1/referrals/trials", token: ahead, headers: map[string]string{"X-Request-Id": "clock-ahead-1"}})
	send(t, base, call{path: "/api/v1/referrals/trials", token: plain, headers: map[string]string{"X-Request-Id": "clock-plain-1"}})
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "journal")
	mark := func(id string) string {
		return fmt.Sprintf(`document.querySelector('#journal-rows tr[data-request-id=%s] .clock-mark')`, jsString(id))
	}
	row := fmt.Sprintf(`document.querySelector('#journal-rows tr[data-request-id=%s]')`, jsString("clock-plain-1"))
	waitFor(t, ctx, "the client's own clock marked", mark("clock-ahead-1")+` && `+mark("clock-ahead-1")+`.textContent === '+1m50s' && !!`+row)
	if eval[bool](t, ctx, `!!`+mark("clock-plain-1")) {
		t.Error("an entry on the sandbox's clock is marked as on a client's own")
	}
}
