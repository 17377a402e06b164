package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleCreatesAndDeletesClients drives the Clients view: fixture
// clients are listed and marked; a client created from the form gets the
// roles and time to live asked for, its secret is shown once (it works at
// the token endpoint, and is gone from the page once dismissed); its own
// clock moves without the sandbox's; deleting it ends its secret.
func TestConsoleCreatesAndDeletesClients(t *testing.T) {
	_, base := newSandbox(t)
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "clients")
	row := func(id string) string { return fmt.Sprintf(`#clients tr[data-client-id=%s]`, jsString(id)) }
	waitFor(t, ctx, "the fixture clients", `!!document.querySelector(`+jsString(row("sandbox-partner"))+`)`)
	if got := eval[string](t, ctx, `document.querySelector(`+jsString(row("sandbox-partner"))+`).textContent`); !strings.Contains(got, "fixture") || strings.Contains(got, "Delete") {
		t.Errorf("fixture client row %q: want it marked fixture, without a Delete button", got)
	}

	// A wrong time to live is refused with the field named.
	do(t, ctx, "ask for a client that lives for ever",
		chromedp.SendKeys(chromedp.ID("client-ttl"), "forever"),
		chromedp.Click(chromedp.CSS(`#client-form button[type=submit]`)))
	waitFor(t, ctx, "the ttl error", `document.getElementById('client-form-error').textContent.includes('ttl')`)

	const id = "qa-job-1"
	do(t, ctx, "fill in the client form",
		chromedp.Evaluate[chromedp.Void](`document.getElementById('client-ttl').value = ''`),
		chromedp.SendKeys(chromedp.ID("client-id"), id),
		chromedp.Click(chromedp.CSS(`#client-roles input[value="QualifiedReferrals.Write"]`)),
		chromedp.SendKeys(chromedp.ID("client-ttl"), "1h"),
		chromedp.Click(chromedp.CSS(`#client-form button[type=submit]`)))
	waitFor(t, ctx, "the secret shown", `!document.getElementById('client-secret').hidden && document.getElementById('client-secret-value').value !== ''`)
	waitFor(t, ctx, "the new client listed", `!!document.querySelector(`+jsString(row(id)+` button[data-action="delete"]`)+`)`)
	secret := eval[string](t, ctx, `document.getElementById('client-secret-value').value`)
	box := eval[string](t, ctx, `document.getElementById('client-secret').innerText`)
	for _, want := range []string{id, "will not be shown again", "Copy"} {
		if !strings.Contains(box, want) {
			t.Errorf("secret box %q lacks %q", box, want)
		}
	}
	if status, _, _ := requestToken(t, base, id, secret); status != http.StatusOK {
		t.Fatalf("token with the secret the console showed: %d, want 200", status)
	}
	var client struct {
		Origin    string   `json:"origin"`
		Roles     []string `json:"roles"`
		ExpiresAt string   `json:"expiresAt"`
	}
	adminJSON(t, base, "/__sandbox/clients/"+id, &client)
	if client.Origin != "runtime" || len(client.Roles) != 4 || strings.Contains(strings.Join(client.Roles, ","), "QualifiedReferrals.Write") || client.ExpiresAt == "" {
		t.Errorf("created client %+v, want a runtime client with 4 roles (no QualifiedReferrals.Write) and an expiry", client)
	}
	if got := eval[string](t, ctx, `document.querySelector(`+jsString(row(id))+`).textContent`); !strings.Contains(got, "runtime") || !strings.Contains(got, "UTC") {
		t.Errorf("new client's row %q: want it marked runtime with its expiry", got)
	}
	saveScreenshot(t, ctx, "console-clients.png", true)

	do(t, ctx, "dismiss the secret", chromedp.Click(chromedp.ID("client-secret-done")))
	waitFor(t, ctx, "the secret gone", `document.getElementById('client-secret').hidden`)
	page := eval[string](t, ctx, `document.documentElement.outerHTML + [...document.querySelectorAll('input')].map(i => i.value).join(' ')`)
	if strings.Contains(page, secret) {
		t.Error("the page still holds the secret after it was dismissed")
	}
	do(t, ctx, "refresh the list", chromedp.Click(chromedp.ID("clients-refresh")))
	if page := eval[string](t, ctx, `document.body.innerText`); strings.Contains(page, secret) {
		t.Error("the refreshed list shows the secret")
	}

	// The client's own clock moves; the sandbox's does not.
	do(t, ctx, "pick the client's clock", chromedp.SetValue(chromedp.ID("clock-client"), id),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('clock-client').dispatchEvent(new Event('change'))`))
	do(t, ctx, "advance its clock an hour", chromedp.Click(chromedp.ID("client-clock-1h")))
	waitFor(t, ctx, "its own clock shown", `document.getElementById('client-clock-offset').textContent.includes('+1h0m0s')`)
	var clock struct {
		Offset   string `json:"offset"`
		Real     bool   `json:"real"`
		OwnClock bool   `json:"ownClock"`
	}
	adminJSON(t, base, "/__sandbox/clock?clientId="+id, &clock)
	if clock.Offset != "1h0m0s" || !clock.OwnClock {
		t.Errorf("client clock after +1 h: %+v", clock)
	}
	adminJSON(t, base, "/__sandbox/clock", &clock)
	if !clock.Real {
		t.Errorf("the sandbox clock moved with the client's: %+v", clock)
	}
	do(t, ctx, "put its clock back", chromedp.Click(chromedp.ID("client-clock-reset")))
	waitFor(t, ctx, "its clock back", `document.getElementById('client-clock-offset').textContent.startsWith('real time')`)

	do(t, ctx, "accept the confirmation", chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`))
	do(t, ctx, "delete the client", chromedp.Click(chromedp.CSS(row(id)+` button[data-action="delete"]`)))
	waitFor(t, ctx, "the client gone from the list", `!document.querySelector(`+jsString(row(id))+`) && !!document.querySelector(`+jsString(row("sandbox-partner"))+`)`)
	if status, _, body := send(t, base, call{path: "/__sandbox/clients/" + id}); status != http.StatusNotFound {
		t.Errorf("GET the deleted client: %d %s, want 404", status, body)
	}
	if status, _, _ := requestToken(t, base, id, secret); status == http.StatusOK {
		t.Error("the deleted client still gets tokens")
	}
	noStrayNull(t, ctx)
}
