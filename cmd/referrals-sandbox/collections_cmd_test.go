package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/collections"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
)

// collectionRunners finds newman and bru, pinned in tools/collections-run.
func collectionRunners(t *testing.T) (newman, bru string) {
	t.Helper()
	bin, err := filepath.Abs("../../tools/collections-run/node_modules/.bin")
	if err != nil {
		t.Fatal(err)
	}
	newman, bru = filepath.Join(bin, "newman"), filepath.Join(bin, "bru")
	for _, p := range []string{newman, bru} {
		if _, err := os.Stat(p); err != nil {
			testutil.Missing(t, "COLLECTION_RUNNERS_REQUIRED", "newman and @usebruno/cli are not installed (cd tools/collections-run && npm ci)")
		}
	}
	testutil.Tool(t, "node", "COLLECTION_RUNNERS_REQUIRED", "apt-get install nodejs")
	return newman, bru
}

// TestCollectionsRunAgainstTheSandbox: the collections the binary writes
// run in newman and in Bruno's CLI against a started sandbox: every
// request answers the status it asserts, the API's requests with the token
// each tool fetched through the collection's auth.
func TestCollectionsRunAgainstTheSandbox(t *testing.T) {
	newman, bru := collectionRunners(t)
	addr := "127.0.0.1:" + closedPort(t)
	s := startServer(t, t.TempDir(), []string{"SANDBOX_LOG_FORMAT=json"}, "--addr", addr)
	s.lineContaining(t, `"msg":"referrals-sandbox ready"`)
	dir := t.TempDir()
	if res := runCLI(t, nil, "collections", dir, "--url", "http://"+addr); res.code != 0 {
		t.Fatalf("collections: exit %d, %s", res.code, res.stderr)
	}
	postmanFile := filepath.Join(dir, collections.PostmanFile)
	var c struct {
		Item []struct {
			Item []json.RawMessage `json:"item"`
		} `json:"item"`
	}
	data, err := os.ReadFile(postmanFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	requests := 0
	for _, f := range c.Item {
		requests += len(f.Item)
	}

	t.Run("newman", func(t *testing.T) {
		report := filepath.Join(t.TempDir(), "newman.json")
		out, err := exec.Command(newman, "run", postmanFile, "--reporters", "cli,json", "--reporter-json-export", report, "--color", "off").CombinedOutput()
		if err != nil {
			t.Fatalf("newman: %v\n%s", err, out)
		}
		var r struct {
			Run struct {
				Stats struct {
					Requests   struct{ Total, Failed int }
					Assertions struct{ Total, Failed int }
				} `json:"stats"`
			} `json:"run"`
		}
		readJSON(t, report, &r)
		// The collection's pre-request script asks for one token besides,
		// and reuses it for the whole run.
		if st := r.Run.Stats; st.Requests.Total != requests+1 || st.Assertions.Failed != 0 || st.Assertions.Total < requests {
			t.Errorf("newman ran %d requests (want %d and one token request), %d of %d assertions failed\n%s", st.Requests.Total, requests, st.Assertions.Failed, st.Assertions.Total, out)
		}
	})
	t.Run("bruno", func(t *testing.T) {
		report := filepath.Join(t.TempDir(), "bru.json")
		// --sandbox developer runs the assertions in Node's vm: the default
		// "safe" QuickJS runtime is loaded asynchronously, and the first
		// request's assertions sometimes ran before it was ready
		// ("Cannot read properties of undefined (reading 'newContext')").
		cmd := exec.Command(bru, "run", "--sandbox", "developer", "--reporter-json", report)
		cmd.Dir = filepath.Join(dir, collections.BrunoDir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bru: %v\n%s", err, out)
		}
		var r []struct {
			Summary struct {
				TotalRequests    int `json:"totalRequests"`
				FailedRequests   int `json:"failedRequests"`
				TotalAssertions  int `json:"totalAssertions"`
				FailedAssertions int `json:"failedAssertions"`
			} `json:"summary"`
		}
		readJSON(t, report, &r)
		if len(r) != 1 {
			t.Fatalf("bru report has %d iterations, want 1", len(r))
		}
		if sm := r[0].Summary; sm.TotalRequests != requests || sm.FailedRequests != 0 || sm.FailedAssertions != 0 || sm.TotalAssertions < requests {
			t.Errorf("bru: %+v, want %d requests and no failure\n%s", sm, requests, out)
		}
		if strings.Contains(string(out), "401 Unauthorized") && !strings.Contains(string(out), "Token expired") {
			t.Errorf("bru got a 401 outside the drills:\n%s", out)
		}
	})
}

func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, data)
	}
}
