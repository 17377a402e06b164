package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkTestcontainers runs the Testcontainers example (its own module,
// examples/testcontainers) against this image through Podman's
// Docker-compatible API on a unix socket. Ryuk, Testcontainers' reaper, is
// an image pulled from a registry, so it is off: the example removes its
// container itself.
func (img imageUnderTest) checkTestcontainers(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
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
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("podman's API socket did not answer within 30s")
		}
		time.Sleep(200 * time.Millisecond)
	}

	cmd := exec.CommandContext(t.Context(), goTool, "test", "-count=1", "./...")
	cmd.Dir = filepath.Join("..", "..", "examples", "testcontainers")
	cmd.Env = append(img.p.env,
		"DOCKER_HOST=unix://"+sock,
		"TESTCONTAINERS_RYUK_DISABLED=true",
		"REFERRALS_SANDBOX_IMAGE="+img.tag,
	)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("examples/testcontainers: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ok ") {
		t.Errorf("examples/testcontainers ran no test:\n%s", out)
	}
	t.Logf("Testcontainers example (build and run) took %s", time.Since(start).Round(time.Millisecond))
}
