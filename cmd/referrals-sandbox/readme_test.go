package main

import (
	"bufio"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// readmeURL is the address the README's examples use.
const readmeURL = "http://127.0.0.1:8080"

// shellBlocks returns the bodies of the README's ```sh blocks, in order.
// Blocks fenced as console or bash are shown, not run.
func shellBlocks(t *testing.T, path string) []string {
	t.Helper()
	return fencedBlocks(t, path, "sh", "")
}

// fencedBlocks returns the bodies of the ```lang blocks of a Markdown
// file, in order: all of them when heading is empty, else those from the
// line heading to the next heading of the same or a higher level.
func fencedBlocks(t *testing.T, path, lang, heading string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	level, _, _ := strings.Cut(heading, " ")
	inSection := heading == ""
	var blocks []string
	var current *strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case current != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, current.String())
			current = nil
		case current != nil:
			current.WriteString(line + "\n")
		case heading != "" && line == heading:
			inSection = true
		case heading != "" && inSection && strings.HasPrefix(line, "#") && len(strings.SplitN(line, " ", 2)[0]) <= len(level):
			inSection = false
		case inSection && strings.TrimSpace(line) == "```"+lang:
			current = &strings.Builder{}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// TestReadmeShellBlocks runs every ```sh block of the README, in order and
// in one shell (later blocks use $TOKEN from the first), against a sandbox
// started as `go run ./cmd/referrals-sandbox` would start it. Each block
// must exit 0; curl -f makes an unexpected HTTP error fail it.
func TestReadmeShellBlocks(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed; .ci/run installs it")
	}
	blocks := shellBlocks(t, "../../README.md")
	if len(blocks) < 4 {
		t.Fatalf("found %d sh blocks in the README; the curl session and the QA section should give more", len(blocks))
	}
	in, err := sandbox.Open(sandbox.Options{RateLimit: sandbox.DefaultRateLimit, RateBurst: sandbox.DefaultRateBurst})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	srv := httptest.NewServer(in.Server)
	defer srv.Close()

	// One variable names the sandbox, so a reader on another port changes
	// one line: the address appears once, in the first block.
	for i, b := range blocks {
		want := 0
		if i == 0 {
			want = 1
		}
		if got := strings.Count(b, readmeURL); got != want {
			t.Errorf("README sh block %d names %s %d times, want %d (use $SANDBOX)", i+1, readmeURL, got, want)
		}
	}

	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for i, b := range blocks {
		fmt.Fprintf(&script, "echo '>>> README sh block %d' >&2\n", i+1)
		script.WriteString(strings.ReplaceAll(b, readmeURL, srv.URL))
	}
	cmd := exec.Command("bash", "-c", script.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("README blocks failed: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{`"message":"pong"`, `"trialId":"TRIAL-ONCO-002"`, `"externalSourceId":"partner-ref-0001"`, `"action":"viewed"`, "503\n", "403\n", "401\n", "415\n403\n403\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("README output lacks %q:\n%s", want, text)
		}
	}
}
