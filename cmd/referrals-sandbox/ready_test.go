package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// readyLine is the JSON log line serve writes once it accepts connections.
type readyLine struct {
	Msg         string `json:"msg"`
	Addr        string `json:"addr"`
	AuthURL     string `json:"auth_url"`
	TokenURL    string `json:"token_url"`
	BaseURL     string `json:"base_url"`
	RootURL     string `json:"root_url"`
	Environment string `json:"environment"`
	Clients     string `json:"clients"`
}

// TestRunCommandServesTokens is the README's run command (`go run
// ./cmd/referrals-sandbox`: serve with no flags) on a free port instead of
// 8080: the ready line names the addresses, stdout shows the default
// credentials, and a curl-like client-credentials POST gets a token.
func TestRunCommandServesTokens(t *testing.T) {
	s := startServer(t, t.TempDir(), []string{"SANDBOX_ADDR=127.0.0.1:0", "SANDBOX_LOG_FORMAT=json"})
	raw := s.lineContaining(t, `"msg":"referrals-sandbox ready"`)
	var ready readyLine
	if err := json.Unmarshal([]byte(raw), &ready); err != nil {
		t.Fatalf("ready line is not JSON: %v\n%s", err, raw)
	}
	host, port, err := net.SplitHostPort(ready.Addr)
	if err != nil || host != "127.0.0.1" || port == "0" || port == "" {
		t.Fatalf("addr %q, want 127.0.0.1 and the port picked", ready.Addr)
	}
	root := "http://" + ready.Addr
	want := map[string]string{
		"root_url":    root,
		"base_url":    root + "/api/v1",
		"auth_url":    root + "/" + idp.DefaultTenant,
		"token_url":   root + "/" + idp.DefaultTenant + "/oauth2/v2.0/token",
		"environment": referrals.EnvironmentDevelopment,
	}
	got := map[string]string{"root_url": ready.RootURL, "base_url": ready.BaseURL, "auth_url": ready.AuthURL, "token_url": ready.TokenURL, "environment": ready.Environment}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	defaults, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	var wantIDs []string
	for _, c := range defaults.Clients {
		if c.EnvironmentOrDefault() == referrals.EnvironmentDevelopment {
			wantIDs = append(wantIDs, c.ClientID)
		}
	}
	if gotIDs := strings.Split(ready.Clients, ","); !slices.Equal(gotIDs, wantIDs) {
		t.Errorf("clients %v, want %v", gotIDs, wantIDs)
	}

	// The curl of the README: a client-credentials POST to token_url.
	form := url.Values{
		"grant_type": {"client_credentials"}, "client_id": {"sandbox-partner"},
		"client_secret": {"sandbox-partner-secret"}, "scope": {"api://referrals-sandbox/.default"},
	}
	resp, err := http.PostForm(ready.TokenURL, form)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || tok.AccessToken == "" || tok.TokenType != "Bearer" {
		t.Errorf("token endpoint: %d %+v %v", resp.StatusCode, tok, err)
	}

	code, rest := s.stop(t)
	if code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
	if !slices.ContainsFunc(rest, func(l string) bool { return strings.Contains(l, `"msg":"shutting down"`) }) {
		t.Errorf("no shutting down line after SIGTERM: %q", rest)
	}
	// The banner is printed after the ready line, so it is complete once
	// the process has exited.
	out := s.stdout.String()
	for _, c := range defaults.Clients {
		if !strings.Contains(out, "client_id="+c.ClientID+" ") || !strings.Contains(out, "client_secret="+c.ClientSecret+" ") {
			t.Errorf("stdout lacks the credentials of %s:\n%s", c.ClientID, out)
		}
	}
	if !strings.Contains(out, "scope=api://referrals-sandbox/.default") {
		t.Errorf("stdout lacks the scope:\n%s", out)
	}
}

// TestReadyLineInContainer: listening on every interface, as the image
// does (SANDBOX_ADDR=0.0.0.0:8080), the ready line's 127.0.0.1 URLs are
// the container's own, not the port published on the host; the line says
// so and names --public-url. With --public-url, the line's URLs are that
// address and need no note.
func TestReadyLineInContainer(t *testing.T) {
	type line struct {
		readyLine
		URLNote string `json:"url_note"`
	}
	ready := func(t *testing.T, environ ...string) line {
		t.Helper()
		s := startServer(t, t.TempDir(), append(environ, "SANDBOX_LOG_FORMAT=json"))
		raw := s.lineContaining(t, `"msg":"referrals-sandbox ready"`)
		var got line
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatalf("ready line is not JSON: %v\n%s", err, raw)
		}
		if code, _ := s.stop(t); code != 0 {
			t.Errorf("exit %d after SIGTERM", code)
		}
		return got
	}

	t.Run("every interface, no public URL", func(t *testing.T) {
		port := closedPort(t)
		got := ready(t, "SANDBOX_ADDR=0.0.0.0:"+port)
		if got.RootURL != "http://127.0.0.1:"+port {
			t.Errorf("root_url %q", got.RootURL)
		}
		if !strings.Contains(got.URLNote, "published port") || !strings.Contains(got.URLNote, "--public-url") {
			t.Errorf("url_note %q: want it to say the published port may differ and name --public-url", got.URLNote)
		}
	})
	t.Run("public URL", func(t *testing.T) {
		const public = "http://localhost:18080"
		got := ready(t, "SANDBOX_ADDR=0.0.0.0:"+closedPort(t), "SANDBOX_PUBLIC_URL="+public)
		if got.RootURL != public || got.BaseURL != public+"/api/v1" || got.TokenURL != public+"/"+idp.DefaultTenant+"/oauth2/v2.0/token" {
			t.Errorf("ready line %+v, want its URLs under %s", got.readyLine, public)
		}
		if got.URLNote != "" {
			t.Errorf("url_note %q with --public-url set", got.URLNote)
		}
	})
	t.Run("loopback", func(t *testing.T) {
		if got := ready(t, "SANDBOX_ADDR=127.0.0.1:"+closedPort(t)); got.URLNote != "" {
			t.Errorf("url_note %q on a loopback address, which is what local clients use", got.URLNote)
		}
	})
}
