package sandbox_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/conformance"
)

// withNames rebuilds the provider with extra host names (--tls-host) and a
// public URL.
func withNames(publicURL string, hosts ...string) sandboxOption {
	return func(cfg *sandboxConfig) { cfg.PublicURL, cfg.TLSHosts = publicURL, hosts }
}

// viaHost sends a request to the sandbox with the Host header a client that
// reached it by another name would send.
func (s *testSandbox) viaHost(t *testing.T, method, host, path, token string, form url.Values) *response {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r, err := http.NewRequest(method, s.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	r.Host = host
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.plain.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// tokenVia fetches a token through host and returns it with its issuer.
func (s *testSandbox) tokenVia(t *testing.T, host string) (token, iss string) {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {partner}, "client_secret": {partner + "-secret"}, "scope": {apiScope}}
	r := s.viaHost(t, http.MethodPost, host, "/"+idp.DefaultTenant+"/oauth2/v2.0/token", "", form)
	if r.Status != http.StatusOK {
		t.Fatalf("token via %s: %d %s", host, r.Status, r.Body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	r.decode(t, &tok)
	parts := strings.Split(tok.AccessToken, ".")
	var claims struct {
		Iss string `json:"iss"`
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken, claims.Iss
}

// TestTokensValidThroughEveryName fetches a token through one name the
// sandbox serves and uses it through another, both ways: loopback names, a
// --tls-host name (a compose service) on another port, the public URL.
// A name the sandbox does not serve stays refused with "wrong issuer".
func TestTokensValidThroughEveryName(t *testing.T) {
	s := newSandbox(t, withNames("https://referrals.example.test", "sandbox"))
	port := s.URL[strings.LastIndex(s.URL, ":")+1:]
	names := []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "sandbox:8080", "LOCALHOST:18080"}
	for _, from := range names {
		token, iss := s.tokenVia(t, from)
		if iss != "https://referrals.example.test/"+idp.DefaultTenant+"/v2.0" {
			t.Errorf("token via %s: iss %q, want the public URL's", from, iss)
		}
		for _, to := range names {
			if r := s.viaHost(t, http.MethodGet, to, "/api/v1/referrals/trials", token, nil); r.Status != http.StatusOK {
				t.Errorf("token fetched via %s, used via %s: %d %s", from, to, r.Status, r.Body)
			}
		}
	}
}

// TestIssuerNamesWithoutPublicURL: without --public-url each token carries
// the name it was fetched through, and is valid through the other names.
func TestIssuerNamesWithoutPublicURL(t *testing.T) {
	s := newSandbox(t, withNames("", "sandbox"))
	port := s.URL[strings.LastIndex(s.URL, ":")+1:]
	loopback, local := "127.0.0.1:"+port, "localhost:"+port
	pairs := [][2]string{{loopback, local}, {local, loopback}, {"sandbox:8080", local}, {local, "sandbox:8080"}}
	for _, p := range pairs {
		token, iss := s.tokenVia(t, p[0])
		if want := "http://" + p[0] + "/" + idp.DefaultTenant + "/v2.0"; iss != want {
			t.Errorf("token via %s: iss %q, want %q", p[0], iss, want)
		}
		if r := s.viaHost(t, http.MethodGet, p[1], "/health/ping", token, nil); r.Status != http.StatusOK {
			t.Errorf("token fetched via %s, used via %s: %d %s", p[0], p[1], r.Status, r.Body)
		}
	}
	// A name the sandbox does not serve: valid only where it was issued.
	token, _ := s.tokenVia(t, "intruder.example:"+port)
	r := s.viaHost(t, http.MethodGet, local, "/health/ping", token, nil)
	if r.Status != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), "wrong issuer") {
		t.Errorf("token of intruder.example used via localhost: %d %q, want 401 wrong issuer", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	if p := r.problem(t); strings.Contains(p.Detail, "retry") || !strings.Contains(p.Detail, "auth_url") {
		t.Errorf("wrong issuer detail %q: want the configuration remedy, not a retry", p.Detail)
	}
	// The report says why: a configuration error, not "retry".
	var report conformance.Report
	s.admin(http.MethodGet, "/__sandbox/report?clientId="+partner, nil).decode(t, &report)
	found := false
	for _, cr := range report.Clients {
		for _, c := range cr.Checks {
			if c.ID == conformance.CheckExpiredToken && strings.Contains(c.Explanation, "1 wrong issuer (configuration:") {
				found = c.Result == conformance.Fail
			}
		}
	}
	if !found {
		t.Errorf("no failing expired-token check naming the wrong issuer in %+v", report.Clients)
	}
}
