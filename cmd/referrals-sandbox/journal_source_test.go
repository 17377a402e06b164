package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestJournalWalksSayAnEntryIsTooLargeToRead: against a sandbox whose
// journal page is larger than the CLI reads, even one entry at a time,
// requests, fixtures import --from-journal and drift --recording all say
// that the entry after the last id read is too large, and none blames
// --url.
func TestJournalWalksSayAnEntryIsTooLargeToRead(t *testing.T) {
	var pages atomic.Int64
	huge := `{"requests":[{"id":1,"at":"2026-01-02T03:04:05Z","method":"GET","path":"/api/v1/referrals/trials","status":200,` +
		`"headers":{"X-Big":"` + strings.Repeat("x", maxResponseBytes) + `"}}],"nextAfterId":null}`
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/__sandbox/requests" {
			http.NotFound(w, r)
			return
		}
		pages.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, huge)
	}))
	t.Cleanup(stub.Close)

	for _, args := range [][]string{
		{"requests", "--url", stub.URL, "--json"},
		{"fixtures", "import", "--from-journal", stub.URL, filepath.Join(t.TempDir(), "out")},
		{"drift", "--recording", stub.URL, "--max-rps", "1000"},
	} {
		r := runCLI(t, nil, args...)
		if r.code == 0 || !strings.Contains(r.stderr, "the journal entry after id 0 is too large to read") ||
			strings.Contains(r.stderr, "is --url a sandbox") {
			t.Errorf("%s: exit %d, stderr %q; want it to say the entry after id 0 is too large to read", args[0], r.code, r.stderr)
		}
	}
	if n := pages.Load(); n != 6 {
		t.Errorf("the walks asked for %d pages, want 6: a page, then the entry alone, for each of 3 commands", n)
	}
}
