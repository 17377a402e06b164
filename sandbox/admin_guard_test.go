package sandbox_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// The admin API has no token by default, so it must not be drivable by a
// web page the QA person happens to visit, nor readable through a DNS name
// an attacker rebinds to 127.0.0.1. Each test below is an attack a browser
// can make, sent over real HTTP.

const (
	evilOrigin  = "https://evil.example"
	reboundHost = "rebind.attacker.example"
)

// wantRecordKept fails the test unless the partner can still read the
// qualified referral it created: proof that a refused reset reset nothing.
func wantRecordKept(t *testing.T, s *testSandbox, token, externalSourceID string) {
	t.Helper()
	if r := s.do(request{path: "/api/v1/referrals/qualified/" + externalSourceID, token: token}); r.Status != http.StatusOK {
		t.Fatalf("record %s after a refused reset: %d %s, want 200 (the reset must not have run)", externalSourceID, r.Status, r.Body)
	}
}

// TestAdminRefusesResetFromWebPage: the reset a web page can send without a
// CORS preflight (text/plain, a form, no body) is refused with 415, and one
// that declares another site is refused with 403; nothing is reset.
func TestAdminRefusesResetFromWebPage(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	s.createQualified(tok, "kept-through-attacks")

	for _, c := range []struct {
		name    string
		body    any
		headers map[string]string
		status  int
		words   string
	}{
		{"text/plain from another site", "{}", map[string]string{"Content-Type": "text/plain", "Origin": evilOrigin}, http.StatusForbidden, "other sites"},
		{"text/plain, no Origin", "{}", map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType, "application/json"},
		{"form", "a=b", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType, "application/json"},
		{"no body, no type", nil, nil, http.StatusUnsupportedMediaType, "no Content-Type"},
		{"JSON from another site's Origin", map[string]any{}, map[string]string{"Origin": evilOrigin}, http.StatusForbidden, evilOrigin},
		{"JSON with Sec-Fetch-Site cross-site", map[string]any{}, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden, "cross-site"},
		{"JSON from an opaque origin", map[string]any{}, map[string]string{"Origin": "null"}, http.StatusForbidden, "other sites"},
		{"JSON but empty", "", map[string]string{"Content-Type": "application/json"}, http.StatusBadRequest, "{}"},
		{"JSON with a parameter", map[string]any{"everything": true}, nil, http.StatusUnprocessableEntity, "see errors"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := s.as(t)
			r := s.do(request{method: http.MethodPost, path: "/__sandbox/reset", body: c.body, headers: c.headers, plain: true})
			p := wantProblem(t, r, c.status, problemTypeOf(c.status))
			if !strings.Contains(p.Detail, c.words) {
				t.Errorf("detail %q should mention %q", p.Detail, c.words)
			}
			wantRecordKept(t, s, tok, "kept-through-attacks")
		})
	}

	// The console's own calls (same origin, JSON) and scripts still reset.
	r := s.do(request{method: http.MethodPost, path: "/__sandbox/reset", body: map[string]any{}, plain: true,
		headers: map[string]string{"Origin": s.URL, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json; charset=utf-8"}})
	if r.Status != http.StatusOK {
		t.Fatalf("same-origin JSON reset: %d %s", r.Status, r.Body)
	}
	if r := s.do(request{path: "/api/v1/referrals/qualified/kept-through-attacks", token: s.token(partner)}); r.Status != http.StatusNotFound {
		t.Errorf("record after a real reset: %d, want 404", r.Status)
	}
}

// problemTypeOf is the problem type the sandbox answers status with.
func problemTypeOf(status int) string {
	switch status {
	case http.StatusForbidden:
		return sandbox.ProblemTypeForbidden
	case http.StatusUnsupportedMediaType:
		return sandbox.ProblemTypeUnsupportedMediaType
	case http.StatusUnprocessableEntity:
		return sandbox.ProblemTypeValidationFailed
	}
	return sandbox.ProblemTypeBadRequest
}

// TestAdminRefusesEmptyActivation: activating permissions-revoked with an
// empty body (what a page's form or beacon sends) switches nothing on; {}
// does.
func TestAdminRefusesEmptyActivation(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	const path = "/__sandbox/library/permissions-revoked"
	r := s.do(request{method: http.MethodPost, path: path, plain: true})
	wantProblem(t, r, http.StatusUnsupportedMediaType, sandbox.ProblemTypeUnsupportedMediaType)
	r = s.do(request{method: http.MethodPost, path: path, body: "", headers: map[string]string{"Content-Type": "application/json"}, plain: true})
	wantProblem(t, r, http.StatusBadRequest, sandbox.ProblemTypeBadRequest)
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
		t.Fatalf("API after refused activations: %d, want 200 (permissions-revoked must not be active)", r.Status)
	}
	if r := s.admin(http.MethodPost, path, map[string]any{}); r.Status != http.StatusCreated {
		t.Fatalf("activation with {}: %d %s", r.Status, r.Body)
	}
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusForbidden {
		t.Errorf("API after activating permissions-revoked: %d, want 403", r.Status)
	}
}

// TestAdminRefusesEveryStateChangeWithoutJSON: no state-changing admin
// route can be called without declaring JSON, and each says what to send.
func TestAdminRefusesEveryStateChangeWithoutJSON(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, "/__sandbox/scenarios"},
		{http.MethodDelete, "/__sandbox/scenarios"},
		{http.MethodDelete, "/__sandbox/scenarios/any"},
		{http.MethodPost, "/__sandbox/library/flaky"},
		{http.MethodDelete, "/__sandbox/library/flaky"},
		{http.MethodPost, "/__sandbox/clock"},
		{http.MethodPost, "/__sandbox/reset"},
		{http.MethodPost, "/__sandbox/referrals/" + fixtureTrialID + "/" + fixtureOutcomesID + "/status"},
		{http.MethodPost, "/__sandbox/qualified/" + fixtureSourceID + "/status"},
		{http.MethodDelete, "/__sandbox/requests"},
	} {
		r := s.do(request{method: c.method, path: c.path, body: `{}`, headers: map[string]string{"Content-Type": "text/plain;charset=UTF-8"}, plain: true})
		p := wantProblem(t, r, http.StatusUnsupportedMediaType, sandbox.ProblemTypeUnsupportedMediaType)
		if !strings.Contains(p.Detail, "Content-Type: application/json") || !strings.Contains(p.Detail, "{}") {
			t.Errorf("%s %s: detail %q should say to send Content-Type: application/json and {}", c.method, c.path, p.Detail)
		}
	}
}

// TestAdminRefusesReboundHost: a page whose DNS name was rebound to the
// sandbox cannot read partners' records through the admin API; the names
// the sandbox is reached by still can.
func TestAdminRefusesReboundHost(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, func(c *sandboxConfig) { c.AllowedHosts = []string{"sandbox", "Sandbox.Team.Example."} })
	s.createQualified(s.token(partner), "secret-patient-record")
	const path = "/__sandbox/data/qualified?clientId=" + partner

	for _, host := range []string{reboundHost, reboundHost + ":" + portOf(t, s.URL), "sandbox.attacker.example", "10.1.2.3", "localhost.attacker.example"} {
		r := s.do(request{path: path, host: host, plain: true})
		if r.Status != http.StatusForbidden {
			t.Errorf("Host %q: %d, want 403", host, r.Status)
			continue
		}
		p := wantProblem(t, r, http.StatusForbidden, sandbox.ProblemTypeForbidden)
		if !strings.Contains(p.Detail, "--allowed-host") {
			t.Errorf("Host %q: detail %q should name --allowed-host", host, p.Detail)
		}
		if strings.Contains(string(r.Body), "secret-patient-record") {
			t.Errorf("Host %q: the refusal leaks the record", host)
		}
	}
	port := portOf(t, s.URL)
	for _, host := range []string{"localhost:" + port, "LOCALHOST", "127.0.0.1:" + port, "127.1.2.3", "[::1]:" + port, "sandbox:8080", "sandbox", "sandbox.team.example"} {
		r := s.do(request{path: path, host: host, plain: true})
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "secret-patient-record") {
			t.Errorf("Host %q: %d %s, want 200 with the record", host, r.Status, r.Body)
		}
	}
}

// TestReboundHostReachesOnlyTokenProtectedRoutes documents the scope of the
// Host check: the admin API and console only. The partner API and the
// identity provider keep answering any name (partners reach a team's
// sandbox by names the sandbox cannot know; tokens protect them), and so
// do the health check and the CA certificate, which hold nothing secret.
func TestReboundHostReachesOnlyTokenProtectedRoutes(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	// Without --public-url the issuer is the URL each request came in on,
	// so the token is fetched under the same name.
	tr := s.do(request{method: http.MethodPost, path: tokenPath, body: tokenForm(partner, partner+"-secret", apiScope).Encode(),
		headers: map[string]string{"Content-Type": formType}, host: reboundHost, plain: true})
	if r := s.do(request{path: trialsPath, token: accessTokenOf(t, tr), host: reboundHost, plain: true}); r.Status != http.StatusOK {
		t.Errorf("API with another Host: %d, want 200", r.Status)
	}
	if r := s.do(request{path: "/__sandbox/health", host: reboundHost}); r.Status != http.StatusOK {
		t.Errorf("health with another Host: %d, want 200", r.Status)
	}
	for _, path := range []string{"/__sandbox/ui/", "/__sandbox/scenarios", "/__sandbox/no-such-path", "/__sandbox/../__sandbox/requests"} {
		r := s.do(request{path: path, host: reboundHost, plain: true})
		wantProblem(t, r, http.StatusForbidden, sandbox.ProblemTypeForbidden)
	}
}

// TestAdminRefusesCrossSiteReads: a page of another site gets 403 from the
// admin API even for reads, but a link from another site still opens the
// console page.
func TestAdminRefusesCrossSiteReads(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	cross := map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Origin": evilOrigin}
	r := s.do(request{path: "/__sandbox/data/qualified?clientId=" + partner, headers: cross, plain: true})
	wantProblem(t, r, http.StatusForbidden, sandbox.ProblemTypeForbidden)

	link := map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
	if r := s.do(request{path: "/__sandbox/ui/", headers: link, plain: true}); r.Status != http.StatusOK {
		t.Errorf("console page opened from another site's link: %d, want 200", r.Status)
	}
	// A page on another port of the same machine is the developer's own.
	local := map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:3000"}
	if r := s.admin(http.MethodGet, "/__sandbox/scenarios", nil); r.Status != http.StatusOK {
		t.Fatalf("plain read: %d", r.Status)
	}
	if r := s.do(request{method: http.MethodPost, path: "/__sandbox/clock", body: map[string]any{"advance": "1h"}, headers: local, plain: true}); r.Status != http.StatusOK {
		t.Errorf("JSON call from http://localhost:3000: %d %s, want 200", r.Status, r.Body)
	}
}

// TestAllowedHostsFromOptions: the --public-url host, --tls-host names, a
// host name in --addr and --allowed-host are all names the admin API
// answers to; anything else is still refused.
func TestAllowedHostsFromOptions(t *testing.T) {
	t.Parallel()
	in, err := sandbox.Open(sandbox.Config{
		PublicURL:    "http://referrals-sandbox.example:9000",
		TLSHosts:     []string{"sandbox-tls"},
		ListenAddr:   "devbox.local:8080",
		AllowedHosts: []string{"sandbox", "192.0.2.7:8080"},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in.Server)
	t.Cleanup(func() { srv.Close(); _ = in.Close() })
	s := &testSandbox{t: t, URL: srv.URL, plain: srv.Client()}
	for _, host := range []string{"referrals-sandbox.example:9000", "sandbox-tls", "devbox.local:8080", "sandbox:8080", "192.0.2.7"} {
		if r := s.do(request{path: "/__sandbox/scenarios", host: host, plain: true}); r.Status != http.StatusOK {
			t.Errorf("Host %q: %d %s, want 200", host, r.Status, r.Body)
		}
	}
	if r := s.do(request{path: "/__sandbox/scenarios", host: reboundHost, plain: true}); r.Status != http.StatusForbidden {
		t.Errorf("Host %q: %d, want 403", reboundHost, r.Status)
	}
	for _, bad := range []string{"http://sandbox:8080", "*.example", ":8080"} {
		if _, err := sandbox.Open(sandbox.Config{AllowedHosts: []string{bad}}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("allowed host %q: error %v, want one naming it", bad, err)
		}
	}
}

// portOf returns the port of a server URL.
func portOf(t *testing.T, rawURL string) string {
	t.Helper()
	i := strings.LastIndex(rawURL, ":")
	if i < 0 {
		t.Fatalf("no port in %q", rawURL)
	}
	return rawURL[i+1:]
}

// TestAdminAcceptsDeleteWithoutBody: `curl -X DELETE` (no body, no
// Content-Type) works on every DELETE route; the Origin, Sec-Fetch-Site
// and Host checks still refuse one, a DELETE that has a body must still
// declare JSON, and a POST without a body is still 415.
func TestAdminAcceptsDeleteWithoutBody(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	bare := func(path string, headers map[string]string, host string) *response {
		t.Helper()
		return s.do(request{method: http.MethodDelete, path: path, headers: headers, host: host, plain: true})
	}
	s.addRule(map[string]any{"id": "bodyless", "endpoint": "api", "status": 503})
	for _, refused := range []struct {
		name    string
		headers map[string]string
		host    string
	}{
		{"another site's Origin", map[string]string{"Origin": evilOrigin}, ""},
		{"Sec-Fetch-Site cross-site", map[string]string{"Sec-Fetch-Site": "cross-site"}, ""},
		{"a rebound Host", nil, reboundHost},
	} {
		wantProblem(t, bare("/__sandbox/scenarios/bodyless", refused.headers, refused.host), http.StatusForbidden, sandbox.ProblemTypeForbidden)
	}
	r := s.do(request{method: http.MethodDelete, path: "/__sandbox/scenarios/bodyless", body: "{}", headers: map[string]string{"Content-Type": "text/plain"}, plain: true})
	wantProblem(t, r, http.StatusUnsupportedMediaType, sandbox.ProblemTypeUnsupportedMediaType)
	r = s.do(request{method: http.MethodPost, path: "/__sandbox/reset", plain: true})
	wantProblem(t, r, http.StatusUnsupportedMediaType, sandbox.ProblemTypeUnsupportedMediaType)
	if r := s.admin(http.MethodGet, "/__sandbox/scenarios/bodyless", nil); r.Status != http.StatusOK {
		t.Fatalf("rule after refused DELETEs: %d %s, want 200 (none may have run)", r.Status, r.Body)
	}

	if r := s.admin(http.MethodPost, "/__sandbox/library/flaky", nil); r.Status != http.StatusCreated {
		t.Fatalf("activate flaky: %d %s", r.Status, r.Body)
	}
	c := s.newClient(nil)
	r = s.admin(http.MethodPost, "/__sandbox/clients/"+c.ClientID+"/secrets", nil)
	if r.Status != http.StatusCreated {
		t.Fatalf("add a secret: %d %s", r.Status, r.Body)
	}
	var secret struct {
		ID string `json:"id"`
	}
	if r.decode(t, &secret); secret.ID == "" {
		t.Fatalf("secret without id: %s", r.Body)
	}
	for _, path := range []string{
		"/__sandbox/scenarios/bodyless",
		"/__sandbox/library/flaky",
		"/__sandbox/scenarios",
		"/__sandbox/requests",
		"/__sandbox/clients/" + c.ClientID + "/secrets/" + secret.ID,
		"/__sandbox/clients/" + c.ClientID,
	} {
		if r := s.do(request{method: http.MethodDelete, path: path}); r.Status != http.StatusNoContent {
			t.Errorf("DELETE %s without a body: %d %s, want 204", path, r.Status, r.Body)
		}
	}
	if r := s.admin(http.MethodGet, "/__sandbox/scenarios/bodyless", nil); r.Status != http.StatusNotFound {
		t.Errorf("rule after DELETE: %d, want 404", r.Status)
	}
}
