package testutil

import (
	"os"
	"os/exec"
	"testing"
)

// Tool finds the command name for a test that runs it; when it is missing,
// Missing decides (install says how to get it).
func Tool(t testing.TB, name, required, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, required, name+" is not installed ("+install+"; .ci/run installs it)")
	}
	return path
}

// Missing ends a test whose tool is not there: it is skipped with why,
// unless CI=true or the variable required is set (as .ci/run sets it), when
// it fails, so CI never passes by skipping.
func Missing(t testing.TB, required, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" || os.Getenv(required) != "" {
		t.Fatalf("%s, and CI=true or %s is set", why, required)
	}
	t.Skip(why)
}
