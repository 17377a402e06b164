package main

import (
	"bytes"
	"context"
	"net"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// cliResult is what one in-process run of the command printed and returned.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs the command in-process, as main would, with environ as the
// whole environment.
func runCLI(t *testing.T, environ map[string]string, args ...string) cliResult {
	t.Helper()
	return runCLIContext(t.Context(), environ, args...)
}

// runCLIContext is runCLI under ctx. A cancelled ctx makes a serve that
// wrongly got past its flag checks stop at once instead of hanging the test.
func runCLIContext(ctx context.Context, environ map[string]string, args ...string) cliResult {
	var stdout, stderr bytes.Buffer
	e := env{stdout: &stdout, stderr: &stderr, getenv: mapGetenv(environ)}
	code := run(ctx, e, args)
	return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func mapGetenv(environ map[string]string) func(string) string {
	return func(name string) string { return environ[name] }
}

// startSandbox serves a sandbox opened with opts on an httptest server and
// returns its root URL.
func startSandbox(t *testing.T, opts sandbox.Config) string {
	t.Helper()
	return serveSandbox(t, opts).URL
}

// serveSandbox serves a sandbox opened with opts on an httptest server,
// closed with the test.
func serveSandbox(t *testing.T, opts sandbox.Config) *httptest.Server {
	t.Helper()
	in, err := sandbox.Open(opts)
	if err != nil {
		t.Fatalf("open sandbox: %v", err)
	}
	srv := httptest.NewServer(in.Server)
	t.Cleanup(func() {
		srv.Close()
		if err := in.Close(); err != nil {
			t.Errorf("close sandbox: %v", err)
		}
	})
	return srv
}

// closedPort returns a loopback port nothing listens on: it was free a
// moment ago and is closed again.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// hostPort returns the host:port of a server URL.
func hostPort(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		t.Fatalf("unexpected server URL %q: %v", rawURL, err)
	}
	return u.Host
}
