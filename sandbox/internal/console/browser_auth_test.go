package console_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestConsoleShowsNoSandboxStateBeforeTheToken opens the console of a
// sandbox started with --admin-token: the page asks for the token first (and
// keeps it in this tab only) and,
// until a token works, shows no clock (the browser's own time is not the
// sandbox's), no view and no error about what it could not load; a refused
// token is said so in the form.
func TestConsoleShowsNoSandboxStateBeforeTheToken(t *testing.T) {
	const adminToken = "qa-admin-token"
	_, base := newSandbox(t, func(o *sandbox.Config) { o.AdminToken = adminToken })
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	do(t, ctx, "open the console", chromedp.Navigate(base+"/__sandbox/ui/#scenarios"))
	waitFor(t, ctx, "the admin token form", `!document.getElementById('auth').hidden`)

	nothingShown := func(when string) {
		t.Helper()
		for _, id := range []string{"clock-now", "clock-offset", "tab-scenarios", "view-scenarios", "rules"} {
			if shown := eval[bool](t, ctx, `document.getElementById('`+id+`').offsetParent !== null`); shown {
				t.Errorf("%s: #%s is shown, reading %q; nothing of the sandbox's state can be known yet", when, id,
					eval[string](t, ctx, `document.getElementById('`+id+`').textContent`))
			}
		}
		if toast := eval[string](t, ctx, `document.getElementById('toast').className + ': ' + document.getElementById('toast').textContent`); strings.Contains(toast, "show") {
			t.Errorf("%s: a toast is shown (%q); the token form is the only thing to say", when, toast)
		}
		if text := eval[string](t, ctx, `document.body.innerText`); strings.Contains(text, "Could not") || strings.Contains(text, "could not") {
			t.Errorf("%s: the page reports a failure before the token was asked for:\n%s", when, text)
		}
	}
	nothingShown("before the token")

	do(t, ctx, "enter a wrong token",
		chromedp.SendKeys(chromedp.ID("auth-token"), "not-the-token"),
		chromedp.Click(chromedp.CSS(`#auth-form button[type=submit]`)))
	waitFor(t, ctx, "the refusal in the form", `document.getElementById('auth-error').textContent.includes('refused')`)
	if hidden := eval[bool](t, ctx, `document.getElementById('auth').hidden`); hidden {
		t.Error("the token form went away after a refused token")
	}
	if shown := eval[bool](t, ctx, `document.getElementById('clock-now').offsetParent !== null`); shown {
		t.Error("after a refused token the header shows a clock")
	}

	do(t, ctx, "enter the right token",
		chromedp.Evaluate[chromedp.Void](`document.getElementById('auth-token').value = ''`),
		chromedp.SendKeys(chromedp.ID("auth-token"), adminToken),
		chromedp.Click(chromedp.CSS(`#auth-form button[type=submit]`)))
	waitFor(t, ctx, "the console with the sandbox's clock",
		`document.getElementById('auth').hidden && document.getElementById('clock-offset').textContent === 'real time' && document.querySelectorAll('#scenario-list li.scenario').length > 5`)
	if got := eval[string](t, ctx, `document.getElementById('clock-now').textContent`); !strings.HasSuffix(got, " UTC") {
		t.Errorf("the clock reads %q once the token works, want the sandbox's time in UTC", got)
	}
	if got := eval[string](t, ctx, `JSON.stringify(localStorage)`); strings.Contains(got, adminToken) {
		t.Error("the admin token was kept in localStorage; it must live in this tab's sessionStorage only")
	}
}

// TestConsoleWaitsForAnUnreachableSandbox serves the page while the admin
// API fails: the console says so, shows no clock or view, and starts by
// itself once the sandbox answers.
func TestConsoleWaitsForAnUnreachableSandbox(t *testing.T) {
	in, _ := newSandbox(t)
	var down atomic.Bool
	down.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() && r.URL.Path == "/__sandbox/clock" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, `{"type":"about:blank","title":"Bad Gateway","status":502,"detail":"the sandbox behind this proxy is down"}`)
			return
		}
		in.Server.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	ctx := newBrowser(t, desktopWidth, desktopHeight)
	do(t, ctx, "open the console", chromedp.Navigate(srv.URL+"/__sandbox/ui/#scenarios"))
	waitFor(t, ctx, "the connection notice", `!document.getElementById('connect-error').hidden && document.getElementById('connect-error').textContent.includes('sandbox behind this proxy is down')`)
	for _, id := range []string{"clock-now", "tab-scenarios", "view-scenarios"} {
		if shown := eval[bool](t, ctx, `document.getElementById('`+id+`').offsetParent !== null`); shown {
			t.Errorf("#%s is shown while the sandbox does not answer", id)
		}
	}
	down.Store(false)
	waitFor(t, ctx, "the console once the sandbox answers",
		`document.getElementById('connect-error').hidden && document.getElementById('clock-offset').textContent === 'real time' && document.querySelectorAll('#scenario-list li.scenario').length > 5`)
}
