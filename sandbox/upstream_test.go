package sandbox_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// Patient data the stand-in's answers carry; none of it may reach the journal.
var realPatient = []string{"Marguerite", "Okonkwo-Real", "1961-03-14", "marguerite.okonkwo@example.org", "+14155550123", "94110", "12 Valencia Street", "prefers mornings, lives alone"}

// realToken is what the stand-in issues: JWT-shaped, as Entra's are.
const realToken = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJhdWQiOiJhcGk6Ly9yZWFsIn0.c2lnbmF0dXJlLW9mLXRoZS1yZWFsLXNlcnZpY2U"

// realService is a stand-in for the real service: an Entra-shaped token
// endpoint and the API, answering with patient data, and with one answer
// (ping's timestamp as a number) that the sandbox's document does not
// allow. It remembers the requests it got.
type realService struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	bodies   []string
}

func startRealService(t *testing.T) *realService {
	t.Helper()
	rs := &realService{}
	referral := `{"trialId":"T-REAL-1","outcomesId":"6f1c2a7e-0b7d-4c1e-9f3a-2d5e8b9c0a11","clientId":"partner","status":"received","submittedAt":"2026-01-02T03:04:05.1234567Z",` +
		`"patient":{"firstName":"Marguerite","lastName":"Okonkwo-Real","dateOfBirth":"1961-03-14","gender":"female","email":"marguerite.okonkwo@example.org","phone":"+14155550123","postalCode":"94110"},"notes":"prefers mornings, lives alone"}`
	mux := http.NewServeMux()
	mux.HandleFunc("POST /real-tenant/oauth2/v2.0/token", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store, no-cache")
		_, _ = io.WriteString(w, `{"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":"`+realToken+`"}`)
	})
	mux.HandleFunc("GET /api/v1/referrals/trials", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Real-Service", "yes")
		_, _ = io.WriteString(w, `{"trials":[{"trialId":"T-REAL-1","altTrialId":"NCT0000001","versionId":"v9","name":"The Real Trial"}]}`)
	})
	mux.HandleFunc("GET /api/v1/referrals/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"referrals":[`+referral+`,`+referral+`]}`)
	})
	mux.HandleFunc("POST /api/v1/referrals/qualified", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"externalSourceId":"ext-1","status":"received","patient":{"firstName":"Marguerite","lastName":"Okonkwo-Real","dateOfBirth":"1961-03-14","gender":"female"},`+
			`"address":{"line1":"12 Valencia Street","city":"San Francisco","postalCode":"94110","country":"US"}}`)
	})
	mux.HandleFunc("GET /health/ping", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"message":"pong","timestamp":1767323045}`)
	})
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Request-Id", "7d1f0c9e-5b7a-4f7e-8a7e-0c1d2e3f4a5b")
		rs.mu.Lock()
		rs.requests, rs.bodies = append(rs.requests, r), append(rs.bodies, string(body))
		rs.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *realService) received() ([]*http.Request, []string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]*http.Request(nil), rs.requests...), append([]string(nil), rs.bodies...)
}

// startProxy runs a sandbox as a recording proxy in front of rs, logging
// into log.
func startProxy(t *testing.T, rs *realService, log io.Writer) *sandboxtest.Sandbox {
	t.Helper()
	return sandboxtest.Start(t, sandboxtest.WithUpstream(rs.URL, rs.URL+"/real-tenant"),
		sandboxtest.WithLogger(slog.New(slog.NewTextHandler(log, nil))))
}

func call(t *testing.T, sb *sandboxtest.Sandbox, method, url, contentType, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+realToken)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := sb.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestRecordingProxyPassesRealAnswersThrough(t *testing.T) {
	rs := startRealService(t)
	sb := startProxy(t, rs, io.Discard)

	resp, body := call(t, sb, http.MethodPost, sb.TokenURL, "application/x-www-form-urlencoded",
		"grant_type=client_credentials&client_id=partner&client_secret=real-secret-value-123&scope=api%3A%2F%2Freal%2F.default")
	if resp.StatusCode != 200 || !strings.Contains(body, realToken) {
		t.Errorf("token: %d %s", resp.StatusCode, body)
	}
	resp, body = call(t, sb, http.MethodGet, sb.BaseURL+"/referrals/trials", "application/json", "", "X-Sandbox-Run", "job-1")
	if resp.StatusCode != 200 || resp.Header.Get("X-Real-Service") != "yes" || !strings.Contains(body, "The Real Trial") {
		t.Errorf("trials: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	reqs, _ := rs.received()
	if len(reqs) != 2 || reqs[0].URL.Path != "/real-tenant/oauth2/v2.0/token" || reqs[1].Header.Get("Authorization") != "Bearer "+realToken {
		t.Fatalf("the real service got %d requests: %v", len(reqs), reqs)
	}
	if reqs[1].Header.Get("X-Sandbox-Run") != "" {
		t.Error("the sandbox's own X-Sandbox-Run header reached the real service")
	}
}

func TestRecordingProxyJournalsPlaceholdersNotPatientData(t *testing.T) {
	rs := startRealService(t)
	sb := startProxy(t, rs, io.Discard)
	call(t, sb, http.MethodPost, sb.TokenURL, "application/x-www-form-urlencoded", "grant_type=client_credentials&client_id=partner&client_secret=real-secret-value-123&scope=s")
	call(t, sb, http.MethodGet, sb.BaseURL+"/referrals/", "application/json", "")
	call(t, sb, http.MethodPost, sb.BaseURL+"/referrals/qualified", "application/json",
		`{"externalSourceId":"ext-1","patient":{"firstName":"Marguerite","lastName":"Okonkwo-Real","dateOfBirth":"1961-03-14","gender":"female","email":"marguerite.okonkwo@example.org"},"address":{"line1":"12 Valencia Street","postalCode":"94110","country":"US"}}`)

	entries := sb.Requests(t, sandboxtest.JournalFilter{})
	raw, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range append(realPatient, realToken, "real-secret-value-123") {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the journal holds %q", secret)
		}
	}
	var list struct {
		Referrals []struct {
			Patient map[string]string `json:"patient"`
			Notes   string            `json:"notes"`
		} `json:"referrals"`
	}
	var listEntry, postEntry *sandboxtest.UpstreamExchange
	for _, e := range entries {
		switch {
		case e.Upstream == nil:
			t.Errorf("entry %s %s has no upstream record", e.Method, e.Path)
		case e.Method == http.MethodGet:
			listEntry = e.Upstream
		case strings.HasSuffix(e.Path, "/qualified"):
			postEntry = e.Upstream
		}
	}
	if listEntry == nil || postEntry == nil {
		t.Fatalf("journal: %s", raw)
	}
	if err := json.Unmarshal(listEntry.Body, &list); err != nil || len(list.Referrals) != 2 {
		t.Fatalf("recorded list body %s: %v", listEntry.Body, err)
	}
	p0, p1 := list.Referrals[0].Patient, list.Referrals[1].Patient
	// The same value gets the same placeholder, in its value's form.
	if p0["lastName"] != p1["lastName"] || p0["lastName"] == "" || p0["dateOfBirth"] != p1["dateOfBirth"] || len(p0["dateOfBirth"]) != len("1900-01-01") ||
		!strings.HasSuffix(p0["email"], "@example.com") || p0["gender"] != "female" {
		t.Errorf("placeholders: %v / %v", p0, p1)
	}
	// Every value is replaced, even one as harmless as a country code: only
	// the document's own words (the gender enum) are kept.
	if strings.Contains(string(postEntry.RequestBody), `"country":"US"`) || !strings.Contains(string(postEntry.RequestBody), p0["lastName"]) {
		t.Errorf("the request body was not journaled with the run's placeholders: %s", postEntry.RequestBody)
	}
}

func TestRecordingProxyMarksDivergencesFromTheDocument(t *testing.T) {
	rs := startRealService(t)
	var log testutil.LockedBuffer
	sb := startProxy(t, rs, &log)
	resp, body := call(t, sb, http.MethodGet, sb.RootURL+"/health/ping", "", "")
	if resp.StatusCode != 200 || !strings.Contains(body, "1767323045") {
		t.Fatalf("ping: %d %s", resp.StatusCode, body)
	}
	call(t, sb, http.MethodGet, sb.BaseURL+"/referrals/trials", "", "")
	entries := sb.Requests(t, sandboxtest.JournalFilter{})
	if len(entries) != 2 || entries[0].Upstream == nil || entries[1].Upstream == nil {
		t.Fatalf("journal: %+v", entries)
	}
	const want = "the real service answered a number at /timestamp of its 200 body; the document says"
	if d := entries[0].Upstream.Divergences; len(d) != 1 || !strings.HasPrefix(d[0], want) {
		t.Errorf("ping divergences: %q", d)
	}
	if d := entries[1].Upstream.Divergences; len(d) != 0 {
		t.Errorf("trials, which follows the document, diverges: %q", d)
	}
	if !strings.Contains(log.String(), "diverges from the OpenAPI document") || !strings.Contains(log.String(), "a number at /timestamp") {
		t.Errorf("the console does not say so:\n%s", log.String())
	}
}

func TestRecordingProxyStillAppliesFailureRules(t *testing.T) {
	rs := startRealService(t)
	sb := startProxy(t, rs, io.Discard)
	sb.AddRule(t, sandboxtest.Rule{Path: "/api/v1/referrals/trials", Status: http.StatusServiceUnavailable, Times: 1})
	if resp, _ := call(t, sb, http.MethodGet, sb.BaseURL+"/referrals/trials", "", ""); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("with the rule: %d, want 503", resp.StatusCode)
	}
	if reqs, _ := rs.received(); len(reqs) != 0 {
		t.Errorf("the forced 503 still reached the real service: %d requests", len(reqs))
	}
	if resp, _ := call(t, sb, http.MethodGet, sb.BaseURL+"/referrals/trials", "", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("after the rule: %d, want the real 200", resp.StatusCode)
	}
}

// A token form the journal could not parse has no bytes left to forward:
// the sandbox's own token endpoint answers it, with Entra's error body.
func TestRecordingProxyAnswersAnUnreadableTokenFormItself(t *testing.T) {
	rs := startRealService(t)
	sb := startProxy(t, rs, io.Discard)
	resp, body := call(t, sb, http.MethodPost, sb.TokenURL, "application/x-www-form-urlencoded", "grant_type=%zz")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"error":"invalid_request"`) {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	if reqs, _ := rs.received(); len(reqs) != 0 {
		t.Errorf("the real service got %d requests", len(reqs))
	}
	entries := sb.Requests(t, sandboxtest.JournalFilter{})
	if len(entries) != 1 || entries[0].Upstream == nil || !strings.Contains(entries[0].Upstream.Error, "could not be read") {
		t.Errorf("journal: %+v", entries)
	}
}

// A path the document lacks is held to the document's 404 and 405 answers.
func TestRecordingProxyHoldsUnknownPathsToTheDocumentsNotFound(t *testing.T) {
	rs := startRealService(t)
	sb := startProxy(t, rs, io.Discard)
	resp, _ := call(t, sb, http.MethodGet, sb.BaseURL+"/no-such-path", "", "")
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d, want the real service's 404", resp.StatusCode)
	}
	entries := sb.Requests(t, sandboxtest.JournalFilter{})
	if len(entries) != 1 || entries[0].Upstream == nil {
		t.Fatalf("journal: %+v", entries)
	}
	// The stand-in's 404 is Go's text/plain page, not a problem body.
	if d := entries[0].Upstream.Divergences; len(d) == 0 || !strings.Contains(strings.Join(d, "\n"), "the real service answered 404") {
		t.Errorf("divergences: %q", d)
	}
}
