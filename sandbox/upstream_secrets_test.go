package sandbox_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// A real service that echoes what the partner sent it (a client secret
// the sandbox does not know and no shape gives away, an opaque access
// token) as values, headers and member names leaves none of it in the
// journal.
func TestRecordingProxyRedactsEchoedSecretsAndTokensEverywhere(t *testing.T) {
	const secret, opaque = "plainsecret77", "opaqueAccessToken4711"
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echoed := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if r.URL.Path == "/tenant/oauth2/v2.0/token" {
			_ = r.ParseForm()
			echoed = r.PostForm.Get("client_secret")
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo", echoed)
		w.Header().Set("Content-Language", echoed)
		body, _ := json.Marshal(map[string]any{"echo": echoed, echoed: true, "access_token": opaque, "token_type": "Bearer"})
		_, _ = w.Write(body)
	}))
	t.Cleanup(upstream.Close)
	sb := sandboxtest.Start(t, sandboxtest.WithUpstream(upstream.URL, upstream.URL+"/tenant"))
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"partner"}, "client_secret": {secret}, "scope": {"s"}}
	resp, err := sb.Client().PostForm(sb.TokenURL, form)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, sb.BaseURL+"/referrals/trials", nil)
	req.Header.Set("Authorization", "Bearer "+opaque)
	if resp, err = sb.Client().Do(req); err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	entries := sb.Requests(t, sandboxtest.JournalFilter{})
	raw, _ := json.Marshal(entries)
	if len(entries) != 2 || !strings.Contains(string(raw), `"[redacted]":true`) {
		t.Fatalf("journal: %s", raw)
	}
	// The configured auth URL is the operator's, kept whole.
	if got := entries[0].Upstream.URL; got != upstream.URL+"/tenant/oauth2/v2.0/token" {
		t.Errorf("the token request went to %s", got)
	}
	for _, v := range []string{secret, opaque} {
		if strings.Contains(string(raw), v) {
			t.Errorf("the journal holds %q:\n%s", v, raw)
		}
	}
}
