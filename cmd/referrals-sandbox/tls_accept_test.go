//go:build linux

package main

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTLSServesAgainAfterOpenFilesLimit is a busy shared sandbox at its
// open-files limit: the built binary, serving --tls under a limit of 64
// open files, is sent more connections than it can hold, so Accept fails
// with EMFILE. Once they are closed it must serve HTTPS again; before, one
// failed Accept stopped the TLS listener for good while the process stayed
// up.
func TestTLSServesAgainAfterOpenFilesLimit(t *testing.T) {
	dir := t.TempDir()
	healthPath := filepath.Join(dir, "health.json")
	s := startServer(t, dir, []string{"SANDBOX_HEALTH_FILE=" + healthPath},
		"--tls", "--tls-dir", filepath.Join(dir, "tls"), "--addr", "127.0.0.1:0")
	s.lineContaining(t, "referrals-sandbox ready")
	hf, found, err := readHealthFile(healthPath)
	if err != nil || !found {
		t.Fatalf("health file: found %v, %v", found, err)
	}
	caPEM, err := os.ReadFile(hf.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
	health := func() error {
		resp, err := client.Get(hf.URL + "/__sandbox/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("health: %d", resp.StatusCode)
		}
		return nil
	}
	if err := health(); err != nil {
		t.Fatalf("health before the limit: %v", err)
	}

	const limit = 64
	if err := unix.Prlimit(s.cmd.Process.Pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: limit}, nil); err != nil {
		t.Fatalf("set the server's open-files limit: %v", err)
	}
	// The kernel completes these connections in the listen backlog; the
	// server accepts them until it runs out of descriptors. Silent, they
	// hold their descriptor while the listener waits for their first byte.
	addr := strings.TrimPrefix(hf.URL, "https://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range 2 * limit {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", len(conns)+1, err)
		}
		conns = append(conns, c)
	}
	s.lineContaining(t, "accept failed")
	for _, c := range conns {
		_ = c.Close()
	}
	conns = nil

	if err := health(); err != nil {
		t.Fatalf("health once the descriptors were freed: %v", err)
	}
	if code, rest := s.stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM; stderr tail %q", code, rest)
	}
}
