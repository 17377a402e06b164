package main

import (
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

func TestClockCommandMovesOneClientOrAll(t *testing.T) {
	root := startSandbox(t, sandbox.Config{})
	environ := map[string]string{"SANDBOX_URL": root}
	res := runCLI(t, environ, "clock", "advance", "2h", "--client-id", "sandbox-partner-2")
	if res.code != 0 || !strings.Contains(res.stdout, "client sandbox-partner-2 time") || !strings.Contains(res.stdout, "offset 2h0m0s") {
		t.Fatalf("advance one client: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	if res := runCLI(t, environ, "clock", "show"); res.code != 0 || !strings.Contains(res.stdout, "offset 0s") {
		t.Errorf("the sandbox clock moved with one client's: %q %q", res.stdout, res.stderr)
	}
	if res := runCLI(t, environ, "clock", "reset", "--client-id", "sandbox-partner-2"); res.code != 0 || !strings.Contains(res.stdout, "offset 0s") {
		t.Errorf("reset one client: %q %q", res.stdout, res.stderr)
	}
	if res := runCLI(t, environ, "clock", "advance", "soon"); res.code != 2 {
		t.Errorf("a bad duration: exit %d", res.code)
	}
	if res := runCLI(t, environ, "clock", "advance", "1h", "--client-id", "nobody"); res.code != 1 || !strings.Contains(res.stderr, "404") {
		t.Errorf("an unknown client: exit %d, stderr %q", res.code, res.stderr)
	}
}
