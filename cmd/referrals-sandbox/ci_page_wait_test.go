package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	yaml "github.com/oasdiff/yaml3"
)

// ciPageWaitStep is the CI page's GitHub Actions step that starts the
// binary in the job, without an image, and waits for it.
func ciPageWaitStep(t *testing.T) string {
	t.Helper()
	for _, block := range ciPageBlocks(t, "## GitHub Actions", "yaml") {
		var steps []workflowStep
		if yaml.Unmarshal([]byte(block), &steps) != nil {
			continue // the job example is a mapping, not a list of steps
		}
		for _, s := range steps {
			if strings.Contains(s.Run, "referrals-sandbox &") {
				return s.Run
			}
		}
	}
	t.Fatal("the CI page's GitHub Actions section has no step running referrals-sandbox &")
	return ""
}

// TestCIPageWaitStepFails runs the CI page's "without an image" step as
// the Actions runner runs a step (bash -eo pipefail), with
// referrals-sandbox on PATH: the step must fail when the sandbox never
// becomes healthy, and pass when it does. A wait loop whose last command
// is `sleep` exits 0 either way.
func TestCIPageWaitStepFails(t *testing.T) {
	step := ciPageWaitStep(t)
	bin := binary(t)
	run := func(t *testing.T, shim string) error {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "referrals-sandbox"), []byte(shim), 0o755); err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(dir, "step.sh")
		if err := os.WriteFile(script, []byte(step), 0o644); err != nil {
			t.Fatal(err)
		}
		// Files, not buffers: the sandbox the step leaves running in the
		// background keeps its output open, and Wait would wait for it.
		out, err := os.Create(filepath.Join(dir, "output"))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "SANDBOX_ADDR=127.0.0.1:" + closedPort(t), "SANDBOX_HEALTH_FILE=" + filepath.Join(dir, "health.json")}
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The step and what it started in the background: one process group.
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		err = cmd.Wait()
		if data, _ := os.ReadFile(out.Name()); len(data) > 0 {
			t.Logf("step output:\n%s", data)
		}
		return err
	}

	t.Run("never healthy", func(t *testing.T) {
		// A sandbox that exits at once (a bad flag, a port in use):
		// nothing ever listens, so every health check fails.
		shim := "#!/bin/sh\nif [ \"$1\" = healthcheck ]; then exec " + bin + " healthcheck; fi\nexit 1\n"
		var exit *exec.ExitError
		if err := run(t, shim); !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("the step exits %v when the sandbox never becomes healthy; want a failure", err)
		}
	})
	t.Run("healthy", func(t *testing.T) {
		if err := run(t, "#!/bin/sh\nexec "+bin+" \"$@\"\n"); err != nil {
			t.Errorf("the step fails with a sandbox that starts: %v", err)
		}
	})
	if !strings.Contains(step, "$(seq ") {
		t.Errorf("the step has no bounded wait loop: %q", step)
	}
}

// TestCIPageGitLabVariables: the GitLab example gives the job every
// REFERRALS_* variable the GitHub Actions example does, the client id and
// secret included, so a test written for one runs in the other.
func TestCIPageGitLabVariables(t *testing.T) {
	github := ciPageGitHubActions(t).Jobs["integration"].Env
	gitlab := ciPageGitLab(t).Variables
	for name, value := range github {
		if !strings.HasPrefix(name, "REFERRALS_") {
			continue
		}
		got, ok := gitlab[name]
		switch {
		case !ok:
			t.Errorf("the GitLab example does not set %s", name)
		case !strings.HasSuffix(name, "_URL") && got != value:
			// URLs differ by host (localhost there, the service alias here).
			t.Errorf("the GitLab example sets %s=%q, the GitHub one %q", name, got, value)
		}
	}
}
