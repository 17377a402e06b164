package main

import (
	"io"
	"log"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

func TestBareHelpListsCommandsThenServeFlags(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		res := runCLI(t, nil, arg)
		if res.code != 0 {
			t.Fatalf("%s: exit %d, stderr %q", arg, res.code, res.stderr)
		}
		list, flags := strings.Index(res.stdout, "Commands:"), strings.Index(res.stdout, "  --addr\n")
		if list < 0 || flags < 0 || list > flags {
			t.Errorf("%s: want the command list, then serve's flags:\n%s", arg, res.stdout)
		}
		for _, c := range commands() {
			if !strings.Contains(res.stdout, "  "+c.name+" ") {
				t.Errorf("%s: does not list %s", arg, c.name)
			}
		}
	}
}

func TestPositionalArgumentsGoAnywhere(t *testing.T) {
	url := startSandbox(t, sandbox.Config{})
	for _, args := range [][]string{
		{"scenario", "apply", "flaky", "--url", url},
		{"scenario", "apply", "--url", url, "flaky"},
		{"scenario", "apply", "--url", url, "--", "flaky"},
	} {
		res := runCLI(t, nil, args...)
		if res.code != 0 || !strings.Contains(res.stdout, "applied flaky") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, res.code, res.stdout, res.stderr)
		}
	}
	res := runCLI(t, nil, "scenario", "apply", "--url", url, "flaky", "extra")
	if res.code != 2 || !strings.Contains(res.stderr, `unexpected argument "extra"`) {
		t.Errorf("extra argument: exit %d, stderr %q", res.code, res.stderr)
	}
	res = runCLI(t, nil, "token", "--url", url, "stray")
	if res.code != 2 || !strings.Contains(res.stderr, `unexpected argument "stray"`) {
		t.Errorf("token with a stray argument: exit %d, stderr %q", res.code, res.stderr)
	}
}

func TestEachClientIDFlagHasItsOwnVariable(t *testing.T) {
	url := startSandbox(t, sandbox.Config{})
	// A job that narrows its scenario to one client must not change whom
	// token asks for, or what report judges.
	environ := map[string]string{"SANDBOX_URL": url, "SANDBOX_SCENARIO_CLIENT_ID": "sandbox-partner-2", "SANDBOX_REPORT_CLIENT_ID": "nobody"}
	res := runCLI(t, environ, "token")
	if res.code != 0 {
		t.Fatalf("token: exit %d, stderr %q", res.code, res.stderr)
	}
	if claims := testutil.JWTClaims(t, strings.TrimSpace(res.stdout)); claims["azp"] != defaultClientID {
		t.Errorf("token asked as %v, want %s", claims["azp"], defaultClientID)
	}
	res = runCLI(t, environ, "scenario", "apply", "flaky")
	if res.code != 0 || !strings.Contains(res.stdout, "for client sandbox-partner-2") {
		t.Errorf("scenario apply: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	// The old shared name means nothing any more.
	res = runCLI(t, map[string]string{"SANDBOX_URL": url, "SANDBOX_CLIENT_ID": "sandbox-readonly"}, "token")
	if claims := testutil.JWTClaims(t, strings.TrimSpace(res.stdout)); res.code != 0 || claims["azp"] != defaultClientID {
		t.Errorf("SANDBOX_CLIENT_ID changed token's client: exit %d, azp %v", res.code, claims["azp"])
	}
}

func TestEveryClientCommandFindsTheSandboxThroughSANDBOX_ADDR(t *testing.T) {
	url := startSandbox(t, sandbox.Config{})
	environ := map[string]string{"SANDBOX_ADDR": hostPort(t, url)}
	for _, args := range [][]string{{"healthcheck"}, {"token"}, {"scenario", "list"}} {
		if res := runCLI(t, environ, args...); res.code != 0 {
			t.Errorf("%q with SANDBOX_ADDR: exit %d, stderr %q", args, res.code, res.stderr)
		}
	}
}

func TestCertificateErrorsSayHowToTrustTheCA(t *testing.T) {
	in, err := sandbox.Open(sandbox.Config{TLS: true, TLSDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	srv := httptest.NewUnstartedServer(in.Server)
	srv.TLS = in.TLS
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for _, args := range [][]string{{"token", "--url", srv.URL}, {"scenario", "list", "--url", srv.URL}, {"healthcheck", "-v", "--url", srv.URL}} {
		res := runCLI(t, nil, args...)
		if res.code != 1 || !strings.Contains(res.stderr, "--ca") || !strings.Contains(res.stderr, "/__sandbox/ca.pem") {
			t.Errorf("%q: exit %d, stderr %q; want the --ca hint", args, res.code, res.stderr)
		}
	}
}

func TestHealthcheckIsQuietUnlessVerbose(t *testing.T) {
	url := "http://127.0.0.1:" + closedPort(t)
	if res := runCLI(t, nil, "healthcheck", "--url", url); res.code != 1 || res.stderr != "" || res.stdout != "" {
		t.Errorf("quiet: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	if res := runCLI(t, nil, "healthcheck", "-v", "--url", url); res.code != 1 || !strings.Contains(res.stderr, "unhealthy") {
		t.Errorf("-v: exit %d, stderr %q", res.code, res.stderr)
	}
}

func TestServeFlagErrorsSayWhatIsExpected(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--token-lifetime", "forever"}, "want a duration such as 90s"},
		{[]string{"--token-version", "3"}, "--token-version: token version \"3\": want 1 or 2"},
		{[]string{"--addr", "127.0.0.1:99999"}, "from 0 to 65535"},
		{[]string{"--addr", "8080"}, "host:port"},
	}
	for _, tc := range tests {
		res := runCLI(t, nil, tc.args...)
		if res.code != 2 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tc.args, res.code, res.stderr, tc.want)
		}
	}
}

func TestBusyPortSaysHowToPickAnother(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	res := runCLI(t, map[string]string{"SANDBOX_TLS_DIR": filepath.Join(t.TempDir(), "tls")}, "--addr", ln.Addr().String())
	if res.code != 1 || !strings.Contains(res.stderr, "--addr 127.0.0.1:0") {
		t.Errorf("exit %d, stderr %q; want the --addr hint", res.code, res.stderr)
	}
}
