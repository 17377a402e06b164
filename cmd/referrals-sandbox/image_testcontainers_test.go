package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
)

// checkTestcontainers runs the Testcontainers examples against this image
// through Podman's Docker-compatible API on a unix socket: Go's (its own
// module, examples/testcontainers) and Node.js's
// (examples/testcontainers-node). Ryuk, Testcontainers' reaper, is an
// image pulled from a registry, so it is off: the examples remove their
// containers themselves.
func (img imageUnderTest) checkTestcontainers(t *testing.T) {
	sock := img.podmanSocket(t)
	env := append(img.p.env,
		"DOCKER_HOST=unix://"+sock,
		"TESTCONTAINERS_RYUK_DISABLED=true",
		"REFERRALS_SANDBOX_IMAGE="+img.tag,
	)
	t.Run("Go", func(t *testing.T) {
		goTool, err := exec.LookPath("go")
		if err != nil {
			t.Skip("go tool not found")
		}
		cmd := exec.CommandContext(t.Context(), goTool, "test", "-count=1", "./...")
		cmd.Dir = filepath.Join("..", "..", "examples", "testcontainers")
		cmd.Env = env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("examples/testcontainers: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "ok ") {
			t.Errorf("examples/testcontainers ran no test:\n%s", out)
		}
		t.Logf("Testcontainers for Go example (build and run) took %s", time.Since(start).Round(time.Millisecond))
	})
	t.Run("Node.js", func(t *testing.T) {
		dir := filepath.Join("..", "..", "examples", "testcontainers-node")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "testcontainers")); err != nil {
			testutil.Missing(t, "TESTCONTAINERS_NODE_REQUIRED", "testcontainers (npm) is not installed (cd examples/testcontainers-node && npm ci)")
		}
		node := testutil.Tool(t, "node", "TESTCONTAINERS_NODE_REQUIRED", "apt-get install nodejs")
		cmd := exec.CommandContext(t.Context(), node, "--test")
		cmd.Dir = dir
		cmd.Env = env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("examples/testcontainers-node: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "# pass 2") {
			t.Errorf("examples/testcontainers-node did not pass its 2 tests:\n%s", out)
		}
		t.Logf("Testcontainers for Node.js example took %s", time.Since(start).Round(time.Millisecond))
	})
}

// podmanSocket starts Podman's Docker-compatible API service on a unix
// socket for the test and returns the socket's path once it answers.
func (img imageUnderTest) podmanSocket(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "podman.sock")
	service := exec.Command(img.p.path, "system", "service", "--time=0", "unix://"+sock)
	service.Env = img.p.env
	if err := service.Start(); err != nil {
		t.Fatalf("podman system service: %v", err)
	}
	t.Cleanup(func() {
		_ = service.Process.Kill()
		_ = service.Wait()
	})
	// The socket appears once the service listens.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, code, _ := img.p.try(t, "--url", "unix://"+sock, "version"); code == 0 {
			return sock
		}
		if time.Now().After(deadline) {
			t.Fatal("podman's API socket did not answer within 30s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
