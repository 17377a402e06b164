package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
)

// tokenForm posts a token request form as given (repeated fields and all).
func (s *testSandbox) tokenForm(form url.Values) *response {
	s.t.Helper()
	return s.do(request{method: http.MethodPost, path: "/" + idp.DefaultTenant + "/oauth2/v2.0/token", body: form.Encode(),
		headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, plain: true})
}

// logLines are the sandbox's JSON log lines with message msg.
func logLines(t *testing.T, logs, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(logs) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %v: %.200s", err, line)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// TestRefusalLogsCannotFlood: an unauthenticated caller sending a 60 KB
// client_id, or a refused admin request with a 60 KB path and Host, as
// fast as it can, gets at most one log line a second, each cut to a few
// hundred bytes; the next line says how many were held back.
func TestRefusalLogsCannotFlood(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 60<<10)
	attacks := []struct {
		name string
		msg  string
		send func(s *testSandbox) *response
		want int
	}{
		{"token endpoint, 60 KB client_id", "token request refused", func(s *testSandbox) *response {
			return s.tokenForm(url.Values{"grant_type": {"client_credentials"}, "client_id": {big}, "client_secret": {"x"}, "scope": {apiScope}})
		}, http.StatusUnauthorized},
		{"admin guard, 60 KB path and Host", "admin request refused", func(s *testSandbox) *response {
			return s.do(request{path: "/__sandbox/scenarios/" + big[:30<<10], host: "evil-" + big[:30<<10] + ".example", plain: true})
		}, http.StatusForbidden},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			const requests = 300
			start := time.Now()
			for range requests {
				if r := a.send(s); r.Status != a.want {
					t.Fatalf("status %d, want %d: %.300s", r.Status, a.want, r.Body)
				}
			}
			elapsed := time.Since(start)
			lines := logLines(t, s.Logs.String(), a.msg)
			if len(lines) == 0 {
				t.Fatal("no refusal was logged at all")
			}
			// One line a second at most (plus the first), whatever the load.
			if limit := int(elapsed/time.Second) + 2; len(lines) > limit {
				t.Errorf("%d lines for %d refusals in %s; at most %d (one a second)", len(lines), requests, elapsed, limit)
			}
			for _, line := range lines {
				b, _ := json.Marshal(line)
				if len(b) > 1024 {
					t.Errorf("a %d-byte log line: values from the request must be cut: %.300s", len(b), b)
				}
			}
			// Keep refusing until the next line is let through: it counts the
			// ones held back. The log line itself is the signal waited for.
			deadline := time.Now().Add(30 * time.Second)
			for {
				a.send(s)
				lines = logLines(t, s.Logs.String(), a.msg)
				if n, ok := lines[len(lines)-1]["suppressed"].(float64); ok && n > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no line counted the refusals held back: %v", lines)
				}
			}
		})
	}
}

// TestRefusalLogsHoldNoSecrets: a client that swaps its id and secret, or
// sends its token as client_id, or an admin caller whose Host, Origin or
// path holds a token, leaves no secret or token in the log, nor gets it
// back in the error body: the log line carries the value redacted as the
// journal redacts it.
func TestRefusalLogsHoldNoSecrets(t *testing.T) {
	t.Parallel()
	partnerSecret := partner + "-secret"
	cases := []struct {
		name    string
		msg     string
		send    func(s *testSandbox, token string) *response
		secrets func(token string) []string
	}{
		{"id and secret swapped", "token request refused", func(s *testSandbox, _ string) *response {
			return s.tokenForm(url.Values{"grant_type": {"client_credentials"}, "client_id": {partnerSecret}, "client_secret": {partner}, "scope": {apiScope}})
		}, func(string) []string { return []string{partnerSecret} }},
		{"token sent as client_id", "token request refused", func(s *testSandbox, token string) *response {
			return s.tokenForm(url.Values{"grant_type": {"client_credentials"}, "client_id": {token}, "client_secret": {"x"}, "scope": {apiScope}})
		}, func(token string) []string { return []string{token, strings.Split(token, ".")[2]} }},
		{"token in the Host of an admin request", "admin request refused", func(s *testSandbox, token string) *response {
			return s.do(request{path: "/__sandbox/scenarios", host: token, plain: true})
		}, func(token string) []string { return []string{token, strings.Split(token, ".")[2]} }},
		{"token in the Origin of an admin request", "admin request refused", func(s *testSandbox, token string) *response {
			return s.do(request{path: "/__sandbox/scenarios", headers: map[string]string{"Origin": "https://" + token + ".example"}, plain: true})
		}, func(token string) []string { return []string{token, strings.Split(token, ".")[2]} }},
		{"token in the path of an admin request", "admin request refused", func(s *testSandbox, token string) *response {
			return s.do(request{path: "/__sandbox/scenarios/" + token, host: "evil.example", plain: true})
		}, func(token string) []string { return []string{token, strings.Split(token, ".")[2]} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t) // a fresh sandbox: this refusal is its first, so it is logged
			token := s.token(partner)
			r := c.send(s, token)
			if r.Status < 400 {
				t.Fatalf("status %d: the request should be refused", r.Status)
			}
			logs := s.Logs.String()
			lines := logLines(t, logs, c.msg)
			if len(lines) != 1 {
				t.Fatalf("%d %q lines, want 1: the test must see the line it checks\n%s", len(lines), c.msg, logs)
			}
			if !strings.Contains(fmt.Sprint(lines[0]), redact.Redacted) {
				t.Errorf("the line does not show the value as %s: %v", redact.Redacted, lines[0])
			}
			for _, secret := range c.secrets(token) {
				if strings.Contains(logs, secret) {
					t.Errorf("the log holds a secret or token (%.20s...)", secret)
				}
				if strings.Contains(string(r.Body), secret) {
					t.Errorf("the error body holds a secret or token (%.20s...): %.300s", secret, r.Body)
				}
			}
		})
	}
}
