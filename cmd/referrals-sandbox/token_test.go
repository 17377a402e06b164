package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

func TestTokenPrintsOnlyTheToken(t *testing.T) {
	url := startSandbox(t, sandbox.Config{})
	tests := []struct {
		name       string
		environ    map[string]string
		args       []string
		wantClient string
	}{
		{"defaults", nil, []string{"--url", url}, "sandbox-partner"},
		{"other client by flags", nil, []string{"--url", url, "--client-id", "sandbox-readonly", "--client-secret", "sandbox-readonly-secret"}, "sandbox-readonly"},
		{"other client by environment", map[string]string{"SANDBOX_URL": url, "SANDBOX_TOKEN_CLIENT_ID": "sandbox-partner-2", "SANDBOX_TOKEN_CLIENT_SECRET": "sandbox-partner-2-secret"}, nil, "sandbox-partner-2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, tc.environ, append([]string{"token"}, tc.args...)...)
			if res.code != 0 {
				t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
			}
			if res.stderr != "" {
				t.Errorf("stderr %q, want nothing", res.stderr)
			}
			token, ok := strings.CutSuffix(res.stdout, "\n")
			if !ok || strings.ContainsAny(token, " \n\t") {
				t.Fatalf("stdout %q is not one token and a newline", res.stdout)
			}
			claims := testutil.JWTClaims(t, token)
			if claims["azp"] != tc.wantClient && claims["appid"] != tc.wantClient {
				t.Errorf("token for %v/%v, want %s", claims["azp"], claims["appid"], tc.wantClient)
			}
			// A v2.0 token (the default) names the API by its application id.
			if want := idp.ApplicationID(idp.DefaultResource); claims["aud"] != want {
				t.Errorf("aud %v, want %s", claims["aud"], want)
			}
			// The token works on the API, as it would with curl.
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/api/v1/referrals/trials", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("API answered %d with the printed token", resp.StatusCode)
			}
		})
	}
}

func TestTokenFailures(t *testing.T) {
	url := startSandbox(t, sandbox.Config{})
	const secret = "not-the-secret-4711"
	tests := []struct {
		name    string
		args    []string
		wantErr []string
	}{
		{"wrong secret", []string{"--client-secret", secret}, []string{"AADSTS7000215", "invalid_client", "401"}},
		{"unknown client", []string{"--client-id", "nobody", "--client-secret", secret}, []string{"AADSTS700016", "nobody"}},
		{"wrong scope", []string{"--scope", "api://nothing/.default"}, []string{"AADSTS70011", "invalid_scope"}},
		{"wrong tenant", []string{"--tenant", "00000000-0000-0000-0000-000000000000", "--client-secret", secret}, []string{"AADSTS90002", "00000000-0000-0000-0000-000000000000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, nil, append([]string{"token", "--url", url}, tc.args...)...)
			if res.code != 1 {
				t.Fatalf("exit %d, want 1; stderr %q", res.code, res.stderr)
			}
			if res.stdout != "" {
				t.Errorf("stdout %q, want nothing", res.stdout)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("stderr lacks %q: %q", want, res.stderr)
				}
			}
			if strings.Contains(res.stderr, secret) {
				t.Errorf("stderr carries the client secret: %q", res.stderr)
			}
		})
	}
}

// TestTokenRedactsAnEchoedSecret points token at a server that echoes the
// form back in its error: the secret must still not reach stderr.
func TestTokenRedactsAnEchoedSecret(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client", "error_description": "bad secret " + r.PostForm.Get("client_secret")})
	}))
	t.Cleanup(echo.Close)
	res := runCLI(t, nil, "token", "--url", echo.URL, "--client-secret", "s3cr3t-value")
	if res.code != 1 || strings.Contains(res.stderr, "s3cr3t-value") || !strings.Contains(res.stderr, "bad secret [client secret]") {
		t.Errorf("exit %d, stderr %q", res.code, res.stderr)
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ msg, secret, want string }{
		{"bad secret hunter22 sent", "hunter22", "bad secret [client secret] sent"},
		{"app 'sandbox-partner'", "x", "app 'sandbox-partner'"},
		{"app 'sandbox-partner'", "", "app 'sandbox-partner'"},
		{"nothing to hide", "hunter22", "nothing to hide"},
	}
	for _, tc := range tests {
		if got := redact(errors.New(tc.msg), tc.secret).Error(); got != tc.want {
			t.Errorf("redact(%q, %q) = %q, want %q", tc.msg, tc.secret, got, tc.want)
		}
	}
}

func TestTokenAgainstSomethingElse(t *testing.T) {
	notSandbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("<html>hello</html>"))
	}))
	t.Cleanup(notSandbox.Close)
	tests := []struct{ name, url, want string }{
		{"web page", notSandbox.URL, "without a token"},
		{"closed port", "http://127.0.0.1:" + closedPort(t), "token request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, nil, "token", "--url", tc.url)
			if res.code != 1 || res.stdout != "" || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
			}
		})
	}
}
