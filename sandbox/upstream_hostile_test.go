package sandbox_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// Figures of the hostile real service below: what one answer of a
// service bent on filling the proxy's journal, log and memory carries.
const (
	hostileItems   = 2_000_000 // invalid array items in one 4 MB answer
	hostileHeaders = 9_006     // response headers of 1 KB each
)

// withHostileUpstream makes the sandbox a recording proxy in front of a
// stand-in real service that answers every API call with the handler's
// answer and ping with a conforming pong.
func withHostileUpstream(t *testing.T, answer http.HandlerFunc) sandboxOption {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Request-Id", "7d1f0c9e-5b7a-4f7e-8a7e-0c1d2e3f4a5b")
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/health/ping" {
			_, _ = io.WriteString(w, `{"message":"pong"}`)
			return
		}
		answer(w, r)
	}))
	t.Cleanup(up.Close)
	return func(c *sandboxConfig) {
		c.Upstream = &sandbox.UpstreamConfig{RootURL: up.URL, AuthURL: up.URL + "/real-tenant"}
	}
}

// divergenceLogLines counts the log lines saying the real service's
// answer to path diverges.
func divergenceLogLines(s *testSandbox, path string) int {
	n := 0
	for line := range strings.Lines(s.Logs.String()) {
		if strings.Contains(line, "diverges from the OpenAPI document") && strings.Contains(line, `"path":"`+path+`"`) {
			n++
		}
	}
	return n
}

// TestRecordingProxyBoundsAHostileAnswer: an answer of 2,000,000 invalid
// items and 9,006 headers of 1 KB is passed on whole, and journaled as
// one entry within journal.MaxEntryBytes, with journal.MaxDivergences
// divergences, a line saying at least how many more, journal.MaxHeaders
// headers, and one log line; the entry before it stays in the journal.
func TestRecordingProxyBoundsAHostileAnswer(t *testing.T) {
	t.Parallel()
	items := "[" + strings.Repeat("1,", hostileItems-1) + "1]"
	s := newSandbox(t, withHostileUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		for i := range hostileHeaders {
			w.Header().Set(fmt.Sprintf("X-Hostile-%05d", i), strings.Repeat("h", 1024))
		}
		_, _ = io.WriteString(w, `{"trials":`+items+`}`)
	}))
	if r := s.do(request{path: "/health/ping", plain: true}); r.Status != http.StatusOK {
		t.Fatalf("ping: %d %s", r.Status, r.Body)
	}
	r := s.do(request{path: trialsPath, plain: true})
	if r.Status != http.StatusOK || len(r.Body) != len(`{"trials":`)+len(items)+1 || r.Header.Get("X-Hostile-09005") == "" {
		t.Fatalf("the partner got %d, %d bytes, not the real service's answer", r.Status, len(r.Body))
	}
	entries := s.journalOf(nil, 2)
	if len(entries) != 2 || entries[0].Path != "/health/ping" || entries[1].Upstream == nil {
		t.Fatalf("journal: %d entries, want the ping and the hostile answer", len(entries))
	}
	hostile := entries[1]
	if size := hostile.Size(); size > journal.MaxEntryBytes {
		t.Errorf("the entry's size is %d bytes, over %d", size, journal.MaxEntryBytes)
	}
	u := hostile.Upstream
	if len(u.Headers) > journal.MaxHeaders {
		t.Errorf("the entry keeps %d upstream headers, want at most %d", len(u.Headers), journal.MaxHeaders)
	}
	d := u.Divergences
	if len(d) != journal.MaxDivergences+1 || !strings.HasPrefix(d[0], "the real service answered a number at /trials/0 of its 200 body") ||
		!strings.HasPrefix(d[len(d)-1], "and at least ") {
		t.Errorf("the entry keeps %d divergences, want %d ending in \"and at least N more\": first %q, last %q",
			len(d), journal.MaxDivergences+1, d[0], d[len(d)-1])
	}
	if n := divergenceLogLines(s, trialsPath); n != 1 {
		t.Errorf("%d log lines say the answer diverges, want 1", n)
	}
	// What the backend holds (memory, or the Redis stream) is the ping's
	// entry and the hostile one, within MaxEntryBytes.
	if held, ok := sample(s.scrape(), "referrals_sandbox_journal_bytes", map[string]string{}); !ok || held > float64(journal.MaxEntryBytes+journal.MaxValueBytes*4) {
		t.Errorf("the journal holds %.0f bytes (found %v), want at most about %d", held, ok, journal.MaxEntryBytes)
	}
}

// TestRecordingProxyCountsEveryDivergenceOfASmallAnswer: an answer within
// the values the proxy checks lists journal.MaxDivergences divergences
// and says exactly how many more.
func TestRecordingProxyCountsEveryDivergenceOfASmallAnswer(t *testing.T) {
	t.Parallel()
	const items = 500
	s := newSandbox(t, withHostileUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"trials":[`+strings.Repeat("1,", items-1)+`1]}`)
	}))
	s.do(request{path: trialsPath, plain: true})
	entries := s.journalOf(nil, 1)
	want := journal.MoreDivergences(items-journal.MaxDivergences, false)
	if d := entries[0].Upstream.Divergences; len(d) != journal.MaxDivergences+1 || d[len(d)-1] != want {
		t.Errorf("divergences: %d, last %q; want %d, last %q", len(d), d[len(d)-1], journal.MaxDivergences+1, want)
	}
}

// TestRecordingProxyWordsHeaderDivergencesAsHeaders: a Retry-After the
// document does not allow and a missing WWW-Authenticate are named as
// headers, not as places in the body.
func TestRecordingProxyWordsHeaderDivergencesAsHeaders(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withHostileUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		if r.URL.Query().Has("limited") {
			w.Header().Set("Retry-After", "soon")
			w.Header().Set("RateLimit-Limit", "10")
			w.Header().Set("RateLimit-Remaining", "0")
			w.Header().Set("RateLimit-Reset", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"type":"about:blank","title":"Too Many Requests","status":429}`)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"type":"about:blank","title":"Unauthorized","status":401}`)
	}))
	s.do(request{path: trialsPath + "?limited=1", plain: true})
	s.do(request{path: trialsPath, plain: true})
	entries := s.journalOf(nil, 2)
	for i, want := range []string{
		"the real service answered a string in the Retry-After header of its 429 answer; the document says",
		"the real service answered 401 without a WWW-Authenticate header; the document requires one",
	} {
		d := strings.Join(entries[i].Upstream.Divergences, "\n")
		if !strings.Contains(d, want) || strings.Contains(d, "body") {
			t.Errorf("answer %d: divergences %q, want %q and no body location", i, d, want)
		}
		if strings.Contains(d, "soon") {
			t.Errorf("answer %d: a divergence quotes the header's value: %q", i, d)
		}
	}
}

// TestMetricsClampUpstreamStatuses: statuses net/http does not name, which
// a recording proxy passes on from the real service, count as their class
// or as other, so no upstream can add a series per status.
func TestMetricsClampUpstreamStatuses(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withHostileUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		status, _ := strconv.Atoi(r.URL.Query().Get("status"))
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{}`)
	}))
	for _, status := range []int{299, 477, 599, 999} {
		if r := s.do(request{path: trialsPath + "?status=" + strconv.Itoa(status), plain: true}); r.Status != status {
			t.Fatalf("status %d passed on as %d", status, r.Status)
		}
	}
	families := s.scrape()
	for label, want := range map[string]float64{"2xx": 1, "4xx": 1, "5xx": 1, "other": 1} {
		wantSample(t, families, "referrals_sandbox_http_requests_total",
			map[string]string{"operation": "/api/v1/referrals/trials", "method": "GET", "status": label, "client": "other"}, want)
	}
	raw, _ := json.Marshal(families["referrals_sandbox_http_requests_total"])
	for _, status := range []string{"299", "477", "599", "999"} {
		if strings.Contains(string(raw), `"value":"`+status+`"`) {
			t.Errorf("a status label %s exists", status)
		}
	}
}
