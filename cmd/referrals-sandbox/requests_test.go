package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// getWithID sends an unauthenticated GET (answered 401) with a request id.
func getWithID(t *testing.T, url, requestID string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(sandbox.RequestIDHeader, requestID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestRequestsFollowsEveryPage: requests prints the whole journal, oldest
// first, across many pages, filtered as asked; --after-id continues where
// a previous run stopped; cut values show in the TRUNCATED column.
func TestRequestsFollowsEveryPage(t *testing.T) {
	base := startSandbox(t, sandbox.Config{})
	const sent = 3*requestsPageSize + 2
	for i := 1; i <= sent; i++ {
		getWithID(t, base+"/api/v1/referrals/trials", fmt.Sprintf("cli-%d", i))
	}
	getWithID(t, base+"/api/v1/referrals/"+strings.Repeat("x", 2000), "cli-long")
	// A response longer than the server's write buffer reaches the client
	// before its handler returns and journals it: wait for the entry.
	waitJournaled(t, base, "cli-long")

	res := runCLI(t, nil, "requests", "--url", base, "--json", "--path", "/api/v1/referrals/trials")
	if res.code != 0 {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	var ids []uint64
	for i, line := range lines {
		var e sandbox.JournalEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %d is not a journal entry: %v\n%s", i+1, err, line)
		}
		if want := fmt.Sprintf("cli-%d", i+1); e.RequestID != want || e.Status != http.StatusUnauthorized {
			t.Errorf("line %d: request %s status %d, want %s 401", i+1, e.RequestID, e.Status, want)
		}
		ids = append(ids, e.ID)
	}
	if len(lines) != sent {
		t.Fatalf("printed %d entries, want all %d (%d pages)", len(lines), sent, sent/requestsPageSize+1)
	}

	res = runCLI(t, nil, "requests", "--url", base, "--after-id", fmt.Sprint(ids[sent-2]))
	if res.code != 0 {
		t.Fatalf("--after-id: exit %d, stderr %s", res.code, res.stderr)
	}
	rows := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(rows) != 3 || !strings.HasPrefix(rows[0], "ID ") || !strings.Contains(rows[2], "path") ||
		!strings.Contains(rows[1], fmt.Sprint(ids[sent-1])) {
		t.Errorf("--after-id of the second-last entry printed:\n%s\nwant the header, the last entry and the long path marked truncated", res.stdout)
	}

	if res := runCLI(t, nil, "requests", "--url", base, "--client-id", "nobody"); res.code != 0 || !strings.Contains(res.stdout, "No matching requests") {
		t.Errorf("no match: exit %d, stdout %q", res.code, res.stdout)
	}
	for _, args := range [][]string{{"--status", "7"}, {"--since", "yesterday"}, {"--after-id", "-1"}} {
		res := runCLI(t, nil, append([]string{"requests", "--url", base}, args...)...)
		if res.code != 2 || !strings.Contains(res.stderr, args[0]) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the flag", args, res.code, res.stderr)
		}
	}
}

// waitJournaled waits (at most 5 s) until the journal holds the request
// with requestID: a journal entry is written when the sandbox has finished
// the request, which its client may see a moment earlier.
func waitJournaled(t *testing.T, base, requestID string) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() error {
		resp, err := http.Get(base + "/__sandbox/requests?limit=1000")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), `"requestId":"`+requestID+`"`) {
			return fmt.Errorf("request %s is not in the journal", requestID)
		}
		return nil
	})
}

// TestRequestsHAR: requests --har prints one HAR 1.2 archive of the
// filtered journal, and --json with --har is a usage error.
func TestRequestsHAR(t *testing.T) {
	base := startSandbox(t, sandbox.Config{})
	for i := 1; i <= 3; i++ {
		getWithID(t, base+"/api/v1/referrals/trials", fmt.Sprintf("har-%d", i))
	}
	getWithID(t, base+"/health/ping", "har-ping")
	waitJournaled(t, base, "har-ping")

	res := runCLI(t, nil, "requests", "--url", base, "--har", "--path", "/api/v1/referrals/trials", "--status", "401")
	if res.code != 0 {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	var archive struct {
		Log struct {
			Version string `json:"version"`
			Entries []struct {
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
				RequestID string `json:"_requestId"`
			} `json:"entries"`
		} `json:"log"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &archive); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, res.stdout)
	}
	if archive.Log.Version != "1.2" || len(archive.Log.Entries) != 3 {
		t.Fatalf("version %q, %d entries; want 1.2 and the 3 trials calls", archive.Log.Version, len(archive.Log.Entries))
	}
	for i, e := range archive.Log.Entries {
		if want := fmt.Sprintf("har-%d", i+1); e.RequestID != want || e.Request.URL != base+"/api/v1/referrals/trials" {
			t.Errorf("entry %d: %s %s, want %s %s/api/v1/referrals/trials", i, e.RequestID, e.Request.URL, want, base)
		}
	}
	if res := runCLI(t, nil, "requests", "--url", base, "--har", "--json"); res.code != 2 {
		t.Errorf("--har --json: exit %d, want 2", res.code)
	}
}
