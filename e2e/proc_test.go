package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
)

// healthWait bounds a start: generous for a loaded CI machine.
const healthWait = 30 * time.Second

// exitWait bounds how long a signalled process may take to exit: the
// default --shutdown-grace (10 s) plus slack.
const exitWait = 20 * time.Second

// sandboxProc is the binary running serve on a loopback port.
type sandboxProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string // http://127.0.0.1:PORT, or https://localhost:PORT with TLS
	// caFile is the sandbox CA with TLS (in its --tls-dir), else "".
	caFile string
	stderr *testutil.LockedBuffer
	done   chan struct{} // closed once the process has been reaped
	err    error         // Wait's error, readable after done
}

// startSandbox runs the binary with extra flags on a free loopback port,
// without a rate limit, and waits until /__sandbox/health answers. The
// process is killed at the end of the test if it is still running.
func startSandbox(t *testing.T, extra ...string) *sandboxProc {
	t.Helper()
	return launch(t, "", extra...)
}

// startTLSSandbox is startSandbox with --tls, the CA in a temporary
// --tls-dir, reached as https://localhost:PORT.
func startTLSSandbox(t *testing.T, extra ...string) *sandboxProc {
	t.Helper()
	dir := t.TempDir()
	return launch(t, dir, append([]string{"--tls", "--tls-dir", dir}, extra...)...)
}

// launch starts the binary; with tlsDir it serves HTTPS and writes its CA
// there.
func launch(t *testing.T, tlsDir string, extra ...string) *sandboxProc {
	t.Helper()
	for attempt := 1; ; attempt++ {
		port := freePort(t)
		args := append([]string{"--addr", "127.0.0.1:" + strconv.Itoa(port), "--rate-limit", "0", "--log-format", "json"}, extra...)
		p := &sandboxProc{t: t, base: "http://127.0.0.1:" + strconv.Itoa(port), stderr: &testutil.LockedBuffer{}, done: make(chan struct{})}
		if tlsDir != "" {
			p.base, p.caFile = "https://localhost:"+strconv.Itoa(port), filepath.Join(tlsDir, "ca.pem")
		}
		p.cmd = exec.Command(sandboxBinary, args...)
		p.cmd.Stdout = io.Discard
		p.cmd.Stderr = p.stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatalf("start the sandbox: %v", err)
		}
		go func() {
			p.err = p.cmd.Wait()
			close(p.done)
		}()
		t.Cleanup(p.kill)
		err := p.waitHealthy()
		if err == nil {
			return p
		}
		p.kill()
		// Another process may take the port between freePort and the bind.
		if attempt >= 3 || !strings.Contains(p.stderr.String(), "address already in use") {
			t.Fatalf("start the sandbox %v: %v\nstderr:\n%s", extra, err, p.stderr)
		}
	}
}

// waitHealthy polls /__sandbox/health every 10 ms, bounded by healthWait.
func (p *sandboxProc) waitHealthy() error {
	deadline := time.Now().Add(healthWait)
	for time.Now().Before(deadline) {
		client, err := p.httpClient()
		if err != nil {
			return err
		}
		resp, err := client.Get(p.base + "/__sandbox/health")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return errors.New("the sandbox exited before it was healthy")
		case <-time.After(10 * time.Millisecond):
		}
	}
	return errors.New("not healthy within " + healthWait.String())
}

// httpClient is a client for the sandbox: with TLS it trusts the CA, once
// the sandbox has written it.
func (p *sandboxProc) httpClient() (*http.Client, error) {
	client := &http.Client{Timeout: time.Second}
	if p.caFile == "" {
		return client, nil
	}
	pem, err := os.ReadFile(p.caFile)
	if errors.Is(err, os.ErrNotExist) {
		return client, nil // not written yet: the health check fails and is retried
	}
	if err != nil {
		return nil, fmt.Errorf("read the sandbox CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return client, nil // still being written: the health check fails and is retried
	}
	client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return client, nil
}

// signal sends sig to the process.
func (p *sandboxProc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("send %v: %v", sig, err)
	}
}

// waitExit waits (bounded) for the process to end and returns its exit
// status; -1 when a signal ended it.
func (p *sandboxProc) waitExit() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(exitWait):
		p.t.Fatalf("the sandbox did not exit within %s\nstderr:\n%s", exitWait, p.stderr)
	}
	var exit *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &exit):
		return exit.ExitCode()
	}
	p.t.Fatalf("wait for the sandbox: %v", p.err)
	return -1
}

// exitedEarly describes how the process ended, or "" while it runs.
func (p *sandboxProc) exitedEarly() string {
	select {
	case <-p.done:
		return fmt.Sprintf("%v", p.err)
	default:
		return ""
	}
}

// kill ends the process with SIGKILL, if it still runs, and reaps it.
func (p *sandboxProc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// freePort asks the kernel for a free loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
