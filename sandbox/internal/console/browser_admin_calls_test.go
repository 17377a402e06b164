package console_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleCallsWithoutParametersStillWork drives, from the page, the
// admin calls that take no parameters (switching a scenario off, resetting
// the sandbox): the admin API refuses them without a JSON body and from
// other sites, and the console, served by the sandbox itself, must still
// get through.
func TestConsoleCallsWithoutParametersStillWork(t *testing.T) {
	_, base := newSandbox(t)
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "scenarios")
	tok := token(t, base, "sandbox-partner")

	toggle := `button[data-action="toggle"][data-scenario="permissions-revoked"]`
	waitFor(t, ctx, "the scenario library", fmt.Sprintf(`!!document.querySelector(%s)`, jsString(toggle)))
	do(t, ctx, "switch permissions-revoked on", chromedp.Click(chromedp.CSS(toggle)))
	waitFor(t, ctx, "the scenario on", fmt.Sprintf(`document.querySelector(%s).getAttribute('aria-pressed') === 'true'`, jsString(toggle)))
	if status, _, body := send(t, base, call{path: "/api/v1/referrals/trials", token: tok}); status != http.StatusForbidden {
		t.Fatalf("trials with permissions-revoked on: %d %s, want 403", status, body)
	}
	do(t, ctx, "switch it off (DELETE)", chromedp.Click(chromedp.CSS(toggle)))
	waitFor(t, ctx, "the scenario off", fmt.Sprintf(`document.querySelector(%s).getAttribute('aria-pressed') === 'false'`, jsString(toggle)))
	if status, _, body := send(t, base, call{path: "/api/v1/referrals/trials", token: tok}); status != http.StatusOK {
		t.Fatalf("trials with permissions-revoked off: %d %s, want 200", status, body)
	}

	do(t, ctx, "move the clock", chromedp.Click(chromedp.ID("clock-1h")))
	waitFor(t, ctx, "the clock moved", `document.getElementById('clock-offset').textContent === '+1h0m0s'`)
	// The reset button asks for confirmation first; answer yes.
	do(t, ctx, "accept the confirmation", chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`))
	do(t, ctx, "reset the sandbox", chromedp.Click(chromedp.ID("sandbox-reset")))
	waitFor(t, ctx, "the reset toast", `document.getElementById('toast').textContent === 'Sandbox reset'`)
	var clock struct {
		Real bool `json:"real"`
	}
	adminJSON(t, base, "/__sandbox/clock", &clock)
	if !clock.Real {
		t.Error("after the console's reset the clock is not back to real time")
	}
}
