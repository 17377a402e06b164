package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// podman runs the podman CLI for the image tests. Its settings come from
// CONTAINERS_CONF, or from the repository's .ci/containers.conf (runc, the
// cgroupfs manager, explicit ulimits: what these machines need).
type podman struct {
	path string
	env  []string
}

// needPodman returns the podman CLI, or skips the test when it is not
// installed (.ci/run installs it, so in CI it always runs).
func needPodman(t *testing.T) *podman {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a container image; skipped with -short")
	}
	path, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("podman is not installed (.ci/run installs it: apt-get install podman runc slirp4netns uidmap fuse-overlayfs); the image is not tested")
	}
	lockPodman(t)
	env := os.Environ()
	if os.Getenv("CONTAINERS_CONF") == "" {
		conf, err := filepath.Abs(filepath.Join("..", "..", ".ci", "containers.conf"))
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, "CONTAINERS_CONF="+conf)
	}
	return &podman{path: path, env: env}
}

// run runs podman with args and returns its stdout, failing the test on a
// non-zero exit.
func (p *podman) run(t *testing.T, args ...string) string {
	t.Helper()
	out, code, stderr := p.try(t, args...)
	if code != 0 {
		t.Fatalf("podman %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	return out
}

// try runs podman with args and returns stdout, the exit status and stderr.
func (p *podman) try(t *testing.T, args ...string) (string, int, string) {
	t.Helper()
	return p.tryContext(t, t.Context(), args...)
}

// cleanup runs podman in a t.Cleanup function, where t.Context() is
// already cancelled, and logs a failure: a leftover must be visible.
func (p *podman) cleanup(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, code, stderr := p.tryContext(t, ctx, args...); code != 0 {
		t.Logf("cleanup: podman %s: exit %d %s", strings.Join(args, " "), code, stderr)
	}
}

func (p *podman) tryContext(t *testing.T, ctx context.Context, args ...string) (string, int, string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, p.path, args...)
	cmd.Env = p.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return strings.TrimSpace(stdout.String()), exit.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatalf("podman %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(stdout.String()), 0, stderr.String()
}

// uniqueName is a container, image or volume name no other test run uses.
func uniqueName(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + "-" + hex.EncodeToString(b)
}

// buildContext lays out what `--build-arg BINARY=context` takes: the
// static binary at <os>/<arch>/referrals-sandbox (GoReleaser's layout) and
// image/rootfs.tar.
func buildContext(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, bin, filepath.Join(dir, "linux", runtime.GOARCH, "referrals-sandbox"), 0o755)
	copyFile(t, filepath.Join("..", "..", "image", "rootfs.tar"), filepath.Join(dir, "image", "rootfs.tar"), 0o644)
	return dir
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, mode); err != nil {
		t.Fatal(err)
	}
}

// container is one running container of the image under test.
type container struct {
	p       *podman
	name    string
	hostURL string // http://127.0.0.1:<published port>
	started time.Time
}

// startContainer runs the image detached with runArgs before the image
// name and cmdArgs after it, publishing 8080 on a free loopback port.
// The container is removed when the test ends.
func (p *podman) startContainer(t *testing.T, image string, runArgs, cmdArgs []string) *container {
	t.Helper()
	c := &container{p: p, name: uniqueName(t, "referrals-sandbox-test")}
	port := closedPort(t)
	c.hostURL = "http://127.0.0.1:" + port
	args := append([]string{"run", "-d", "--name", c.name, "-p", "127.0.0.1:" + port + ":8080"}, runArgs...)
	args = append(append(args, image), cmdArgs...)
	c.started = time.Now()
	p.run(t, args...)
	t.Cleanup(func() { p.cleanup(t, "rm", "-f", "-t", "0", c.name) })
	return c
}

// waitHealthy runs the image's HEALTHCHECK the way a runtime does (podman
// has no timers without systemd: `podman healthcheck run` is one check)
// until it passes, and returns how long after start that was.
func (c *container) waitHealthy(t *testing.T) time.Duration {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, code, stderr := c.p.try(t, "healthcheck", "run", c.name)
		if code == 0 {
			return time.Since(c.started)
		}
		if time.Now().After(deadline) {
			logs, _, _ := c.p.try(t, "logs", c.name)
			t.Fatalf("%s not healthy after 30s: exit %d %s %s\nlogs:\n%s", c.name, code, out, stderr, logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitContainerHealthy waits for the health check of a container started
// by other means (podman-compose) to pass.
func waitContainerHealthy(t *testing.T, p *podman, name string) {
	t.Helper()
	(&container{p: p, name: name, started: time.Now()}).waitHealthy(t)
}

// stop sends SIGTERM (podman stop, 10 s before SIGKILL) and returns how
// long the container took to exit and its exit status.
func (c *container) stop(t *testing.T) (time.Duration, string) {
	t.Helper()
	start := time.Now()
	c.p.run(t, "stop", "-t", "10", c.name)
	took := time.Since(start)
	return took, c.p.run(t, "inspect", "--format", "{{.State.ExitCode}}", c.name)
}

// waitPort waits until the published port accepts a TCP connection, as
// GitLab CI waits for a service.
func waitPort(t *testing.T, hostURL string) {
	t.Helper()
	addr := strings.TrimPrefix(hostURL, "http://")
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s accepts no connection after 30s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lockPodman holds a machine-wide lock until t ends. Podman's image store
// is shared by every test run on the machine, and TestImage removes the
// images its build added (whatever appeared since it started): two runs at
// once, such as a CI job beside a developer's ./test, removed each other's
// images and failed.
func lockPodman(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "referrals-sandbox-podman-tests.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("open the podman tests' lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		t.Fatalf("take the podman tests' lock: %v", err)
	}
	t.Cleanup(func() { _ = f.Close() }) // closing releases the lock
}
