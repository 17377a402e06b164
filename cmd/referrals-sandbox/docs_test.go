package main

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// docsURL is the address the docs' examples use.
const docsURL = "http://127.0.0.1:8080"

// shownFence is the fence of shell commands that are shown, not run:
// those that need more than a sandbox (a container engine, a cluster, npm,
// a second server) or run for minutes.
const shownFence = "console"

// docsOutputs is what each page's sh blocks must print: a page whose
// blocks stopped exercising what they say would still exit 0.
var docsOutputs = map[string][]string{
	"README.md":                 {`"message":"pong"`, `"trialId":"TRIAL-ONCO-002"`, `"externalSourceId":"partner-ref-0001"`, `"action":"viewed"`},
	"docs/failure-scenarios.md": {"503\n", "403\n", "401\n", "415\n403\n403\n"},
}

// TestDocsShellBlocks runs every ```sh block of the README and of the
// pages under docs/, in order and in one shell per page, each page against
// a sandbox of its own started as `go run ./cmd/referrals-sandbox` would
// start it. The README's blocks are the curl session, whose first block
// sets $SANDBOX and $TOKEN; a page's blocks run after that first block,
// as a reader who followed the README would run them, with the
// referrals-sandbox command on PATH finding the sandbox through
// SANDBOX_ADDR. Each block must exit 0; curl -f makes an unexpected HTTP
// error fail it. A shell block fenced otherwise than sh or console would
// be neither run nor marked as shown, and fails the test.
func TestDocsShellBlocks(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed; .ci/run installs it")
	}
	readme := fencedBlocks(t, "README.md", "sh", "")
	if len(readme) < 4 {
		t.Fatalf("found %d sh blocks in the README; the curl session should give more", len(readme))
	}
	// One variable names the sandbox, so a reader on another port changes
	// one line: the address appears once, in the README's first block.
	for i, b := range readme {
		want := 0
		if i == 0 {
			want = 1
		}
		if got := strings.Count(b, docsURL); got != want {
			t.Errorf("README sh block %d names %s %d times, want %d (use $SANDBOX)", i+1, docsURL, got, want)
		}
	}
	ran := map[string]bool{}
	for _, page := range docPages(t) {
		md := readMarkdown(t, page)
		for _, b := range md.blocks {
			if slices.Contains([]string{"bash", "shell", "zsh", "shell-session"}, b.lang) {
				t.Errorf("%s:%d: a ```%s block is neither run nor shown: fence it sh (run by this test) or %s (shown, not run)", page, b.line, b.lang, shownFence)
			}
		}
		blocks := fencedBlocks(t, page, "sh", "")
		if page == "README.md" {
			runShellBlocks(t, page, blocks)
			ran[page] = true
			continue
		}
		for i, b := range blocks {
			if strings.Contains(b, docsURL) {
				t.Errorf("%s sh block %d names %s; use $SANDBOX from the README's curl session", page, i+1, docsURL)
			}
		}
		if len(blocks) > 0 {
			t.Run(page, func(t *testing.T) { runShellBlocks(t, page, append([]string{readme[0]}, blocks...)) })
			ran[page] = true
		}
	}
	for page := range docsOutputs {
		if !ran[page] {
			t.Errorf("%s has no sh blocks, but the test expects output from them", page)
		}
	}
}

// runShellBlocks runs blocks in one bash, in a directory of their own,
// against a new sandbox, and checks the output page's blocks must give.
func runShellBlocks(t *testing.T, page string, blocks []string) {
	t.Helper()
	in, err := sandbox.Open(sandbox.Config{RateLimit: sandbox.DefaultRateLimit, RateBurst: sandbox.DefaultRateBurst})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	srv := httptest.NewServer(in.Server)
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}

	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for i, b := range blocks {
		fmt.Fprintf(&script, "echo '>>> %s sh block %d' >&2\n", page, i+1)
		script.WriteString(strings.ReplaceAll(b, docsURL, srv.URL))
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "SANDBOX_ADDR="+u.Host)
	if strings.Contains(script.String(), "referrals-sandbox ") {
		cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(binary(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s sh blocks failed: %v\n%s", page, err, out)
	}
	for _, want := range docsOutputs[page] {
		if !strings.Contains(string(out), want) {
			t.Errorf("%s sh blocks' output lacks %q:\n%s", page, want, out)
		}
	}
}
