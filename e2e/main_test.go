package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
)

// sandboxBinary is the binary TestMain built; set once before any test
// runs and read-only afterwards.
var sandboxBinary string

// TestMain builds the binary once, static and stripped as the Dockerfile
// builds it, into a directory removed afterwards, unless ./test has built
// it already (testutil.SandboxBinaryEnv).
func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	// serve keeps its local CA in the user's configuration directory: the
	// sandboxes the tests start keep theirs in one of the tests' own.
	config, err := os.MkdirTemp("", "referrals-sandbox-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: configuration directory:", err)
		return 1
	}
	defer os.RemoveAll(config)
	os.Setenv("XDG_CONFIG_HOME", config)
	if sandboxBinary = testutil.PrebuiltSandbox(); sandboxBinary != "" {
		return m.Run() // built once by ./test for this package and cmd/referrals-sandbox
	}
	dir, err := os.MkdirTemp("", "referrals-sandbox-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temporary directory:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	sandboxBinary = filepath.Join(dir, "referrals-sandbox")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", sandboxBinary, "./cmd/referrals-sandbox")
	cmd.Dir = ".." // the module root: this package is e2e/
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/referrals-sandbox: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}
