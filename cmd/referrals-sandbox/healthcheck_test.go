package main

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

func TestHealthcheckExitStatus(t *testing.T) {
	sandboxURL := startSandbox(t, sandbox.Config{})
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	tests := []struct {
		name     string
		url      string
		wantCode int
	}{
		{"healthy sandbox", sandboxURL, 0},
		{"trailing slash", sandboxURL + "/", 0},
		{"500", failing.URL, 1},
		{"closed port", "http://127.0.0.1:" + closedPort(t), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, nil, "healthcheck", "-v", "--url", tc.url)
			if res.code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr %q", res.code, tc.wantCode, res.stderr)
			}
			if res.stdout != "" {
				t.Errorf("stdout %q, want nothing", res.stdout)
			}
			if tc.wantCode == 0 && res.stderr != "" {
				t.Errorf("stderr %q on success, want nothing", res.stderr)
			}
			if tc.wantCode != 0 && !strings.Contains(res.stderr, "unhealthy") {
				t.Errorf("stderr %q does not say why", res.stderr)
			}
		})
	}
}

func TestHealthcheckDefaultsToServeAddress(t *testing.T) {
	sandboxURL := startSandbox(t, sandbox.Config{})
	_, port := splitHostPort(t, hostPort(t, sandboxURL))
	tests := []struct {
		name     string
		addr     string
		wantCode int
	}{
		{"loopback", "127.0.0.1:" + port, 0},
		{"IPv4 wildcard", "0.0.0.0:" + port, 0},
		{"empty host", ":" + port, 0},
		{"nothing there", "127.0.0.1:" + closedPort(t), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, map[string]string{"SANDBOX_ADDR": tc.addr}, "healthcheck")
			if res.code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr %q", res.code, tc.wantCode, res.stderr)
			}
		})
	}
}

func TestServeListenTarget(t *testing.T) {
	tlsDir := t.TempDir()
	tests := []struct {
		name           string
		environ        map[string]string
		wantURL        string
		wantCA         string
		wantSkip       bool
		wantProblemHas string
	}{
		{"serve's default", nil, "http://127.0.0.1:8080", "", false, ""},
		{"wildcard", map[string]string{"SANDBOX_ADDR": "0.0.0.0:9000"}, "http://127.0.0.1:9000", "", false, ""},
		{"IPv6 wildcard", map[string]string{"SANDBOX_ADDR": "[::]:9000"}, "http://127.0.0.1:9000", "", false, ""},
		{"host name kept", map[string]string{"SANDBOX_ADDR": "localhost:9000"}, "http://localhost:9000", "", false, ""},
		{"IPv6 loopback", map[string]string{"SANDBOX_ADDR": "[::1]:9000"}, "http://[::1]:9000", "", false, ""},
		{"local CA", map[string]string{"SANDBOX_TLS": "true", "SANDBOX_TLS_DIR": tlsDir}, "https://127.0.0.1:8080", filepath.Join(tlsDir, "ca.pem"), false, ""},
		{"local CA in a private directory", map[string]string{"SANDBOX_TLS": "true"}, "https://127.0.0.1:8080", "", true, ""},
		{"own certificate", map[string]string{"SANDBOX_TLS": "1", "SANDBOX_TLS_CERT": "cert.pem"}, "https://127.0.0.1:8080", "", true, ""},
		{"TLS off", map[string]string{"SANDBOX_TLS": "false", "SANDBOX_TLS_DIR": tlsDir}, "http://127.0.0.1:8080", "", false, ""},
		{"free port", map[string]string{"SANDBOX_ADDR": "127.0.0.1:0"}, "", "", false, "free port"},
		{"no port", map[string]string{"SANDBOX_ADDR": "127.0.0.1"}, "", "", false, "host:port"},
		{"bad TLS", map[string]string{"SANDBOX_TLS": "perhaps"}, "", "", false, "SANDBOX_TLS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := serveListenTarget(mapGetenv(tc.environ))
			if got.url != tc.wantURL || got.ca != tc.wantCA || got.skipVerify != tc.wantSkip {
				t.Errorf("got url %q ca %q skip %v, want %q %q %v", got.url, got.ca, got.skipVerify, tc.wantURL, tc.wantCA, tc.wantSkip)
			}
			if !strings.Contains(got.problem, tc.wantProblemHas) || (tc.wantProblemHas == "") != (got.problem == "") {
				t.Errorf("problem %q, want one containing %q", got.problem, tc.wantProblemHas)
			}
		})
	}
}

// TestHealthcheckVerifiesTheLocalCA serves the sandbox with its local CA and
// checks that healthcheck finds ca.pem in SANDBOX_TLS_DIR, and refuses a
// certificate another CA signed.
func TestHealthcheckVerifiesTheLocalCA(t *testing.T) {
	tlsDir, otherDir := t.TempDir(), t.TempDir()
	in, err := sandbox.Open(sandbox.Config{TLS: true, TLSDir: tlsDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	other, err := sandbox.Open(sandbox.Config{TLS: true, TLSDir: otherDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	srv := httptest.NewUnstartedServer(in.Server)
	srv.TLS = in.TLS
	// The refused handshakes below are the point; keep them out of the log.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	addr := hostPort(t, srv.URL)
	_, port := splitHostPort(t, addr)
	tests := []struct {
		name     string
		environ  map[string]string
		args     []string
		wantCode int
	}{
		{"CA from the TLS dir", map[string]string{"SANDBOX_ADDR": addr, "SANDBOX_TLS": "true", "SANDBOX_TLS_DIR": tlsDir}, nil, 0},
		{"another CA", map[string]string{"SANDBOX_ADDR": addr, "SANDBOX_TLS": "true", "SANDBOX_TLS_DIR": otherDir}, nil, 1},
		{"CA flag", nil, []string{"--url", srv.URL, "--ca", filepath.Join(tlsDir, "ca.pem")}, 0},
		{"no CA: system roots do not know it", nil, []string{"--url", srv.URL}, 1},
		// serve with --tls-cert: the health check cannot know the CA and
		// asks the loopback address without verifying.
		{"own certificate, derived address", map[string]string{"SANDBOX_ADDR": addr, "SANDBOX_TLS": "true", "SANDBOX_TLS_CERT": "cert.pem"}, nil, 0},
		// serve's default: the CA is in a private directory only serve
		// knows; the check asks the loopback address without verifying.
		{"private TLS directory, derived address", map[string]string{"SANDBOX_ADDR": addr, "SANDBOX_TLS": "true"}, nil, 0},
		{"own certificate, URL given", map[string]string{"SANDBOX_TLS": "true", "SANDBOX_TLS_CERT": "cert.pem"}, []string{"--url", "https://localhost:" + port}, 1},
		{"plain HTTP against TLS", map[string]string{"SANDBOX_ADDR": addr}, nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, tc.environ, append([]string{"healthcheck"}, tc.args...)...)
			if res.code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr %q", res.code, tc.wantCode, res.stderr)
			}
		})
	}
}

func splitHostPort(t *testing.T, hp string) (host, port string) {
	t.Helper()
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		t.Fatal(err)
	}
	return host, port
}
