package console_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestConsoleDownloadsHAR: the journal's "Download HAR" button saves the
// archive of GET /__sandbox/requests.har, behind the admin token, with the
// client filter applied, as a .har file; the token it holds is redacted.
func TestConsoleDownloadsHAR(t *testing.T) {
	const adminToken = "qa-admin-token"
	_, base := newSandbox(t, func(o *sandbox.Config) { o.AdminToken = adminToken })
	partnerToken := token(t, base, "sandbox-partner")
	send(t, base, call{path: "/api/v1/referrals/trials", token: partnerToken, headers: map[string]string{"X-Request-Id": "har-partner"}})
	other := token(t, base, "sandbox-partner-2")
	send(t, base, call{path: "/api/v1/referrals/trials", token: other, headers: map[string]string{"X-Request-Id": "har-partner-2"}})

	ctx := newBrowser(t, desktopWidth, desktopHeight)
	do(t, ctx, "open the console", chromedp.Navigate(base+"/__sandbox/ui/#journal"))
	waitFor(t, ctx, "the admin token form", `!document.getElementById('auth').hidden`)
	do(t, ctx, "enter the token",
		chromedp.SendKeys(chromedp.ID("auth-token"), adminToken),
		chromedp.Click(chromedp.CSS(`#auth-form button[type=submit]`)))
	waitFor(t, ctx, "both requests in the journal", `document.querySelector('#journal-rows tr[data-request-id="har-partner-2"]') !== null`)
	// The page hands the browser a blob to save: keep a copy of what it
	// saves, and of the name it saves it under, instead of a download.
	do(t, ctx, "watch the download", chromedp.Evaluate[chromedp.Void](`(() => {
		const create = URL.createObjectURL;
		URL.createObjectURL = (blob) => { blob.text().then((text) => { window.savedHAR = text; }); return create(blob); };
		HTMLAnchorElement.prototype.click = function () { window.savedName = this.download; };
	})()`))
	do(t, ctx, "filter by client", chromedp.SetValue(chromedp.ID("filter-client"), "sandbox-partner"))
	do(t, ctx, "click Download HAR", chromedp.Click(chromedp.ID("journal-har")))
	waitFor(t, ctx, "the saved archive", `typeof window.savedHAR === 'string'`)

	if name := eval[string](t, ctx, `window.savedName`); !strings.HasSuffix(name, ".har") {
		t.Errorf("saved as %q, want a .har file", name)
	}
	text := eval[string](t, ctx, `window.savedHAR`)
	var archive struct {
		Log struct {
			Version string `json:"version"`
			Entries []struct {
				RequestID string `json:"_requestId"`
				ClientID  string `json:"_clientId"`
			} `json:"entries"`
		} `json:"log"`
	}
	if err := json.Unmarshal([]byte(text), &archive); err != nil {
		t.Fatalf("the saved file is not JSON: %v\n%s", err, text)
	}
	var ids []string
	for _, e := range archive.Log.Entries {
		if e.ClientID != "sandbox-partner" {
			t.Errorf("entry of client %q in a HAR filtered to sandbox-partner", e.ClientID)
		}
		ids = append(ids, e.RequestID)
	}
	if archive.Log.Version != "1.2" || !strings.Contains(strings.Join(ids, ","), "har-partner") {
		t.Errorf("version %q, request ids %v; want 1.2 with har-partner", archive.Log.Version, ids)
	}
	if strings.Contains(text, partnerToken) || strings.Contains(text, adminToken) {
		t.Error("the saved HAR holds a token")
	}
}
