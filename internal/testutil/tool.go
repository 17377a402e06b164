package testutil

import (
	"os"
	"os/exec"
	"testing"
)

// Tool finds the command name for a test that runs it. When it is missing
// the test is skipped with install, unless CI=true or the variable required
// is set (as .ci/run sets it): then it fails, so CI never passes by
// skipping.
func Tool(t testing.TB, name, required, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" || os.Getenv(required) != "" {
		t.Fatalf("%s is not installed and CI=true or %s is set: %v (%s)", name, required, err, install)
	}
	t.Skipf("%s is not installed (%s; .ci/run installs it)", name, install)
	return ""
}
