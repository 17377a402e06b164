package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

const driftSecret = "sandbox-partner-secret"

// driftArgs point drift at upstream as a partner would, with the embedded
// fixtures' partner as the development credentials.
func driftArgs(upstream string, more ...string) []string {
	return append([]string{"drift", "--upstream", upstream, "--upstream-auth-url", upstream + "/" + idp.DefaultTenant,
		"--client-id", "sandbox-partner", "--scope", "api://referrals-sandbox/.default", "--max-rps", "1000"}, more...)
}

func driftEnv() map[string]string { return map[string]string{driftSecretEnv: driftSecret} }

func checkNoSecret(t *testing.T, r cliResult) {
	t.Helper()
	if strings.Contains(r.stdout+r.stderr, driftSecret) {
		t.Errorf("the client secret is in the output:\n%s\n%s", r.stdout, r.stderr)
	}
}

// A sandbox as the upstream, against the sandbox drift starts itself: no
// difference, exit 0, and a summary of what was sent.
func TestDriftCommandAgainstASandboxFindsNothing(t *testing.T) {
	upstream := startSandbox(t, sandbox.Config{RateLimit: sandbox.DefaultRateLimit, RateBurst: sandbox.DefaultRateBurst})
	r := runCLI(t, driftEnv(), driftArgs(upstream, "--writes", "TRIAL-CARDIO-001")...)
	checkNoSecret(t, r)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"sent ", "to the upstream (" + upstream + ")", "0 differences",
		"skipped ping.expired-token: the upstream offers no expired token"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

// An upstream without rate limiting sends no RateLimit-* headers: exit 1
// and the JSON names each difference, until the allow file accepts them.
func TestDriftCommandExitsOneOnDifferencesAndZeroWhenAllowed(t *testing.T) {
	upstream := startSandbox(t, sandbox.Config{})
	r := runCLI(t, driftEnv(), driftArgs(upstream, "--format", "json")...)
	checkNoSecret(t, r)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	var doc struct {
		Differences []struct{ Key, Probe, Aspect, Upstream, Sandbox, Detail string }
		Skipped     []struct{ Name, Reason string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, r.stdout)
	}
	found := false
	for _, d := range doc.Differences {
		found = found || (d.Key == "trials-list/header:Ratelimit-Limit" && d.Upstream == "absent" && d.Sandbox == "integer")
	}
	if !found || len(doc.Skipped) == 0 {
		t.Errorf("differences %+v, skipped %+v", doc.Differences, doc.Skipped)
	}

	allow := filepath.Join(t.TempDir(), "drift-allow.txt")
	if err := os.WriteFile(allow, []byte("*/header:Ratelimit-* our sandbox runs without --rate-limit\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, driftEnv(), driftArgs(upstream, "--allow", allow)...); r.code != 0 {
		t.Errorf("with the allow file: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestDriftCommandUsageAndConnectionErrorsExitTwo(t *testing.T) {
	upstream := startSandbox(t, sandbox.Config{})
	cases := []struct {
		name    string
		environ map[string]string
		args    []string
		want    string
	}{
		{"no secret in the environment", map[string]string{}, driftArgs(upstream), driftSecretEnv},
		{"no upstream", driftEnv(), []string{"drift", "--client-id", "x", "--scope", "y"}, "--upstream"},
		{"unknown format", driftEnv(), driftArgs(upstream, "--format", "yaml"), "--format"},
		{"allow line without reason", driftEnv(), driftArgs(upstream, "--allow", writeFile(t, "ping/status\n")), "no reason"},
		{"upstream unreachable", driftEnv(), driftArgs("http://127.0.0.1:" + closedPort(t)), "no answer"},
		{"credentials refused", map[string]string{driftSecretEnv: "not-the-secret"}, driftArgs(upstream), "credentials refused"},
		{"write trial unknown upstream", driftEnv(), driftArgs(upstream, "--writes", "NO-SUCH-TRIAL"), "NO-SUCH-TRIAL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.environ, tc.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, want 2 with %q; stderr:\n%s", r.code, tc.want, r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, "not-the-secret") {
				t.Error("the secret is in the output")
			}
		})
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
