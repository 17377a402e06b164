package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// openAdminWarnings returns the WARN records of serve's JSON log whose message
// mentions the open admin API.
func openAdminWarnings(t *testing.T, stderr string) []string {
	t.Helper()
	var found []string
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec.Level == "WARN" && strings.Contains(rec.Msg, "admin API is open") {
			found = append(found, rec.Msg)
		}
	}
	return found
}

// TestServeWarnsWhenAdminAPIIsOpenToTheNetwork: serve on a wildcard address
// without --admin-token logs a warning saying who can change the sandbox;
// on loopback, or with a token, it does not. serve runs under a cancelled
// context, so it binds, logs and stops at once instead of staying exposed.
func TestServeWarnsWhenAdminAPIIsOpenToTheNetwork(t *testing.T) {
	stopped, cancel := context.WithCancel(t.Context())
	cancel()
	for _, c := range []struct {
		name    string
		environ map[string]string
		warn    bool
	}{
		{"wildcard, no token", map[string]string{"SANDBOX_ADDR": "0.0.0.0:0"}, true},
		{"loopback, no token", map[string]string{"SANDBOX_ADDR": "127.0.0.1:0"}, false},
		{"wildcard, admin token", map[string]string{"SANDBOX_ADDR": "0.0.0.0:0", "SANDBOX_ADMIN_TOKEN": "s3cret-admin"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.environ["SANDBOX_LOG_FORMAT"] = "json"
			res := runCLIContext(stopped, c.environ, "serve")
			if res.code != 0 {
				t.Fatalf("serve: exit %d, stderr %s", res.code, res.stderr)
			}
			warnings := openAdminWarnings(t, res.stderr)
			if !c.warn {
				if len(warnings) > 0 {
					t.Errorf("unexpected warning %q", warnings)
				}
				return
			}
			if len(warnings) != 1 {
				t.Fatalf("want one warning about the open admin API, got %q; stderr:\n%s", warnings, res.stderr)
			}
			for _, want := range []string{"every network interface", "anyone who can reach this port", "reset the sandbox", "--admin-token", "127.0.0.1"} {
				if !strings.Contains(warnings[0], want) {
					t.Errorf("warning %q should mention %q", warnings[0], want)
				}
			}
			if strings.Contains(res.stderr, "s3cret") {
				t.Error("the log holds the admin token")
			}
		})
	}
}

// TestAllowedHostsFromEnvironment: the built binary answers the admin API
// under the names in SANDBOX_ALLOWED_HOSTS (a compose service name) and
// refuses a rebound one; the CLI's admin calls still work against it.
func TestAllowedHostsFromEnvironment(t *testing.T) {
	addr := "127.0.0.1:" + closedPort(t)
	s := startServer(t, t.TempDir(), []string{"SANDBOX_ADDR=" + addr, "SANDBOX_LOG_FORMAT=json", "SANDBOX_ALLOWED_HOSTS=sandbox, qa-box"})
	s.lineContaining(t, `"msg":"referrals-sandbox ready"`)
	base := "http://" + addr
	for host, want := range map[string]int{
		"sandbox:8080": http.StatusOK, "qa-box": http.StatusOK, "localhost:18080": http.StatusOK,
		"rebind.attacker.example:8080": http.StatusForbidden,
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/__sandbox/data/qualified?clientId=sandbox-partner", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
	for _, args := range [][]string{{"scenario", "apply", "flaky"}, {"scenario", "clear"}} {
		if res := runCLI(t, nil, append(args, "--url", base)...); res.code != 0 {
			t.Errorf("%s: exit %d, %s", strings.Join(args, " "), res.code, res.stderr)
		}
	}
}
