package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
)

// The test build's version, commit and date, stamped with -X as the
// Dockerfile and GoReleaser stamp theirs.
const (
	testVersion = "v0.0.0-test"
	testCommit  = "0123456789abcdef"
	testDate    = "2026-01-02T03:04:05Z"
)

// testLdflags strips the binary and stamps the test version. ./test builds
// with the same flags (keep them in step: TestMetricsListener checks the
// stamp).
const testLdflags = "-s -w -X main.version=" + testVersion + " -X main.commit=" + testCommit + " -X main.date=" + testDate

// builtBinary is the command built as the Dockerfile builds it: static,
// trimmed and stripped. It is built at most once per test binary, on first
// use, and removed by TestMain; under ./test it is the one ./test built
// (testutil.SandboxBinaryEnv), with the same flags.
type builtBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// testBinary is the one build shared by the tests that run the binary.
var testBinary builtBinary

func TestMain(m *testing.M) {
	// serve keeps its local CA in the user's configuration directory: the
	// binaries the tests start keep theirs in one of the tests' own.
	config, err := os.MkdirTemp("", "referrals-sandbox-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "configuration directory:", err)
		os.Exit(1)
	}
	os.Setenv("XDG_CONFIG_HOME", config)
	code := m.Run()
	_ = os.RemoveAll(config)
	if testBinary.dir != "" {
		_ = os.RemoveAll(testBinary.dir)
	}
	os.Exit(code)
}

// binary returns the path of the built command, building it on first call.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	testBinary.once.Do(func() {
		if testBinary.path = testutil.PrebuiltSandbox(); testBinary.path != "" {
			return // ./test built it, as below, for this package and e2e
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			testBinary.err = fmt.Errorf("go tool not found: %w", err)
			return
		}
		if testBinary.dir, err = os.MkdirTemp("", "referrals-sandbox-bin-"); err != nil {
			testBinary.err = err
			return
		}
		testBinary.path = filepath.Join(testBinary.dir, "referrals-sandbox")
		cmd := exec.Command(goTool, "build", "-trimpath", "-ldflags", testLdflags, "-o", testBinary.path, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			testBinary.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if testBinary.err != nil {
		t.Fatalf("build the binary: %v", testBinary.err)
	}
	return testBinary.path
}

// exitCode runs the binary to completion and returns its exit status.
func exitCode(t *testing.T, bin, dir string, environ []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Dir = dir
	cmd.Env = environ
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	}
	t.Fatalf("run %v: %v", args, err)
	return -1, ""
}

// waitHealthy polls healthcheck under environ until it exits 0, giving up
// after a bound generous enough for a loaded CI machine.
func waitHealthy(t *testing.T, bin, dir string, environ []string, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, out := exitCode(t, bin, dir, environ, "healthcheck")
		if code == 0 {
			if out != "" {
				t.Errorf("healthcheck printed %q on success", out)
			}
			return
		}
		select {
		case <-exited:
			t.Fatal("the server exited before it was healthy")
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not healthy after 15s; last healthcheck: exit %d, %q", code, out)
		}
	}
}

// server is the binary running serve in the background.
type server struct {
	cmd    *exec.Cmd
	stdout *testutil.LockedBuffer
	lines  chan string   // stderr, line by line
	exited chan struct{} // closed when stderr reaches EOF (the process ended)
}

// startServer runs the binary in dir with exactly environ as its
// environment, as a scratch or distroless container would.
func startServer(t *testing.T, dir string, environ []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Env = environ
	s := &server{cmd: cmd, stdout: &testutil.LockedBuffer{}, lines: make(chan string, 1000), exited: make(chan struct{})}
	cmd.Stdout = s.stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stderr)
		close(s.lines)
		close(s.exited)
	}()
	t.Cleanup(func() {
		// A test that failed half-way must not leave the server running.
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-s.exited
			_ = cmd.Wait()
		}
	})
	return s
}

// stop sends SIGTERM and returns the exit status and the stderr lines that
// were not read yet.
func (s *server) stop(t *testing.T) (int, []string) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest []string
	timeout := time.After(15 * time.Second)
	for done := false; !done; {
		select {
		case line, ok := <-s.lines:
			if !ok {
				done = true
				continue
			}
			rest = append(rest, line)
		case <-timeout:
			t.Fatal("the server did not exit within 15s of SIGTERM")
		}
	}
	err := s.cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return s.cmd.ProcessState.ExitCode(), rest
}

// TestBinaryInEmptyEnvironment runs the static binary as a scratch or
// distroless container would: an empty working directory and no
// environment but SANDBOX_ADDR (so no HOME, no TMPDIR: the TLS directory
// defaults under /tmp). The container's HEALTHCHECK is `healthcheck` with
// the same environment.
func TestBinaryInEmptyEnvironment(t *testing.T) {
	bin, dir := binary(t), t.TempDir()
	environ := []string{"SANDBOX_ADDR=127.0.0.1:" + closedPort(t)}
	s := startServer(t, dir, environ)
	waitHealthy(t, bin, dir, environ, s.exited)

	if code, out := exitCode(t, bin, dir, []string{"SANDBOX_ADDR=127.0.0.1:" + closedPort(t)}, "healthcheck"); code != 1 {
		t.Errorf("healthcheck against a closed port: exit %d, %q", code, out)
	}
	if code, out := exitCode(t, bin, dir, nil, "version"); code != 0 || out != "referrals-sandbox "+testVersion+" (commit "+testCommit+", built "+testDate+")\n" {
		t.Errorf("version: exit %d, %q", code, out)
	}
	code, rest := s.stop(t)
	if code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0; stderr tail %q", code, rest)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the server wrote into its working directory: %v %v", entries, err)
	}
}

func TestBinaryIsSmall(t *testing.T) {
	info, err := os.Stat(binary(t))
	if err != nil {
		t.Fatal(err)
	}
	// The image is the binary on scratch (see Dockerfile), so the image's
	// bound (maxImageBytes) is the binary's, less room for the
	// image's own two empty directories and its layers' tar headers (a few
	// KB). client_golang and the protobuf runtime it needs (the metrics)
	// cost 2.4 MB of it.
	const limit = maxImageBytes - 64<<10
	t.Logf("stripped static binary: %.1f MB", float64(info.Size())/(1<<20))
	if info.Size() > limit {
		t.Errorf("binary is %d bytes, more than %d", info.Size(), limit)
	}
}

// lineContaining waits for a stderr line containing want.
func (s *server) lineContaining(t *testing.T, want string) string {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("the server exited before logging %q", want)
			}
			if strings.Contains(line, want) {
				return line
			}
		case <-timeout:
			t.Fatalf("no log line with %q within 15s", want)
		}
	}
}
