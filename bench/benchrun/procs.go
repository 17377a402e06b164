package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procs tracks every process the run starts, so that each is killed and
// reaped however the run ends: success, error or SIGINT.
type procs struct {
	mu      sync.Mutex
	running map[*proc]struct{}
}

// proc is one started process.
type proc struct {
	cmd    *exec.Cmd
	done   chan struct{} // closed once the process has been reaped
	stderr *tailBuffer
}

func newProcs() *procs { return &procs{running: map[*proc]struct{}{}} }

// start starts cmd (its stderr kept for error messages) and tracks it.
func (ps *procs) start(cmd *exec.Cmd) (*proc, error) {
	p := &proc{cmd: cmd, done: make(chan struct{}), stderr: &tailBuffer{max: 8 << 10}}
	if cmd.Stderr == nil {
		cmd.Stderr = p.stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	ps.mu.Lock()
	ps.running[p] = struct{}{}
	ps.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop kills p and waits until it is reaped.
func (ps *procs) stop(p *proc) {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	ps.mu.Lock()
	delete(ps.running, p)
	ps.mu.Unlock()
}

// terminate sends p SIGTERM, as Ctrl-C or a container's stop does, and
// waits until it is reaped. A process still running after grace is killed,
// and that is an error: it did not stop as asked.
func (ps *procs) terminate(p *proc, grace time.Duration) error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		ps.stop(p)
		return fmt.Errorf("SIGTERM: %w", err)
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		ps.stop(p)
		return fmt.Errorf("still running %s after SIGTERM, killed: %s", grace, p.stderr)
	}
	ps.mu.Lock()
	delete(ps.running, p)
	ps.mu.Unlock()
	return nil
}

// stopAll kills every process still running.
func (ps *procs) stopAll() {
	ps.mu.Lock()
	list := make([]*proc, 0, len(ps.running))
	for p := range ps.running {
		list = append(list, p)
	}
	ps.mu.Unlock()
	for _, p := range list {
		ps.stop(p)
	}
}

// exited reports whether p has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// rssBytes is the process's resident memory now (VmRSS of
// /proc/PID/status).
func (p *proc) rssBytes() (int64, error) {
	return readVmRSS(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
}

// readVmRSS reads the VmRSS line of a /proc status file.
func readVmRSS(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("resident memory: %w", err)
	}
	defer f.Close()
	return parseVmRSS(f)
}

// parseVmRSS finds "VmRSS:  12345 kB" in a /proc status file.
func parseVmRSS(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "VmRSS:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmRSS %q: %w", f[1], err)
			}
			return kb * 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read status: %w", err)
	}
	return 0, errors.New("no VmRSS line (not Linux, or the process has exited)")
}

// tailBuffer keeps the last max bytes written to it: enough of a process's
// stderr to explain a failure, never unbounded.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(bytes.TrimSpace(b.buf))
}

// freePort asks the kernel for a free loopback port. Another process could
// take it before the sandbox binds it; start retries on that.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	return port, nil
}

// sandbox is a running sandbox binary.
type sandbox struct {
	*proc
	base string // http://127.0.0.1:PORT
}

// sandboxArgs are the flags of every measured sandbox: no rate limit (it
// would measure the limiter), no store quota (a round of submissions
// stores far more than a test suite, and every write past the quota
// would be a 507, not a figure), warnings only (no per-request logging
// cost that a partner's run would not have either), loopback.
func sandboxArgs(port int, extra ...string) []string {
	return append([]string{
		"--addr", "127.0.0.1:" + strconv.Itoa(port),
		"--rate-limit", "0", "--quota-records", "0", "--quota-bytes", "0",
		"--log-level", "warn", "--log-format", "json",
	}, extra...)
}

// startSandbox starts the binary with extra flags and waits until
// /__sandbox/health answers 200, within wait. A port taken between
// freePort and the bind is retried with another port, three times at most.
func (ps *procs) startSandbox(ctx context.Context, bin string, wait time.Duration, extra ...string) (*sandbox, error) {
	var lastErr error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, bin, sandboxArgs(port, extra...)...)
		cmd.Stdout = io.Discard
		p, err := ps.start(cmd)
		if err != nil {
			return nil, err
		}
		s := &sandbox{proc: p, base: "http://127.0.0.1:" + strconv.Itoa(port)}
		err = waitHealthy(ctx, s, wait)
		if err == nil {
			return s, nil
		}
		ps.stop(p)
		lastErr = err
		if !strings.Contains(p.stderr.String(), "address already in use") {
			break
		}
	}
	return nil, lastErr
}

// waitHealthy polls /__sandbox/health every 5 ms until it answers 200, the
// process exits, or wait passes.
func waitHealthy(ctx context.Context, s *sandbox, wait time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if ok, _ := healthy(ctx, client, s.base); ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return fmt.Errorf("the sandbox exited before it was healthy: %s", s.stderr)
		case <-deadline.C:
			return fmt.Errorf("the sandbox was not healthy after %s: %s", wait, s.stderr)
		case <-tick.C:
		}
	}
}

// healthy reports whether GET /__sandbox/health answers 200.
func healthy(ctx context.Context, client *http.Client, base string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/__sandbox/health", nil)
	if err != nil {
		return false, fmt.Errorf("health request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK, nil
}

// startCeiling starts the bare handler and reads its address from its
// first line of output.
func (ps *procs) startCeiling(ctx context.Context, bin string) (*proc, string, error) {
	return ps.startPrinting(ctx, exec.CommandContext(ctx, bin, "--addr", "127.0.0.1:0"), "the ceiling server")
}

// startPrinting starts cmd, a server that prints its address (host:port)
// as its first line of output, and returns its base URL.
func (ps *procs) startPrinting(ctx context.Context, cmd *exec.Cmd, what string) (*proc, string, error) {
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", fmt.Errorf("%s: stdout: %w", what, err)
	}
	p, err := ps.start(cmd)
	if err != nil {
		return nil, "", err
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	select {
	case addr, ok := <-line:
		if ok && addr != "" {
			return p, "http://" + addr, nil
		}
		ps.stop(p)
		return nil, "", fmt.Errorf("%s printed no address: %s", what, p.stderr)
	case <-timeout.C:
		ps.stop(p)
		return nil, "", fmt.Errorf("%s printed no address within 10s", what)
	case <-ctx.Done():
		ps.stop(p)
		return nil, "", ctx.Err()
	}
}
