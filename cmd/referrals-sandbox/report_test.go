package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/conformance"
)

// serveReportSandbox serves a fresh sandbox with start (httptest.NewServer
// or NewTLSServer).
func serveReportSandbox(t *testing.T, opts sandbox.Config, start func(http.Handler) *httptest.Server) *httptest.Server {
	t.Helper()
	in, err := sandbox.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := start(in.Server)
	t.Cleanup(func() {
		srv.Close()
		_ = in.Close()
	})
	return srv
}

// reportClient plays a partner client against srv.
type reportClient struct {
	t     *testing.T
	srv   *httptest.Server
	token string
}

func newReportClient(t *testing.T, srv *httptest.Server) *reportClient {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {defaultClientID},
		"client_secret": {defaultClientSecret}, "scope": {defaultScope}}
	resp, err := http.Post(srv.URL+"/"+idp.DefaultTenant+"/oauth2/v2.0/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	return &reportClient{t: t, srv: srv, token: tok.AccessToken}
}

// get calls path with the client's token, with an optional body.
func (c *reportClient) get(path, body string) {
	c.t.Helper()
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, _ := http.NewRequest(http.MethodGet, c.srv.URL+path, reader)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// runReportCLI runs `referrals-sandbox report` in-process.
func runReportCLI(t *testing.T, environ map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := env{stdout: &out, stderr: &errOut, getenv: func(name string) string { return environ[name] }}
	code = run(t.Context(), e, append([]string{"report"}, args...))
	return code, out.String(), errOut.String()
}

func TestReportExitCodes(t *testing.T) {
	tests := []struct {
		name       string
		play       func(c *reportClient) // what the client does before the report
		args       []string
		wantCode   int
		wantOut    []string
		wantStderr string
	}{
		{"clean client passes", func(c *reportClient) {
			for range 3 {
				c.get("/api/v1/referrals/trials", "")
			}
		}, nil, 0, []string{"sandbox-partner, program Go-http-client/1.1: PASS (4 requests;", "CHECK", "reuses-tokens", "1 new token for 3 accepted calls", "https-only", "not-exercised"}, ""},
		{"warning passes by default", func(c *reportClient) {
			for range 8 {
				c.get("/health/ping", "")
			}
		}, nil, 0, []string{"sandbox-partner, program Go-http-client/1.1: WARN", "pings-sparingly", "8 pings within 60 s (limit 6)"}, ""},
		{"warning fails with --fail-on warn", func(c *reportClient) {
			for range 8 {
				c.get("/health/ping", "")
			}
		}, []string{"--fail-on", "warn"}, 1, []string{"pings-sparingly"}, "1 check warned (--fail-on warn)"},
		{"a raised ping limit passes", func(c *reportClient) {
			for range 8 {
				c.get("/health/ping", "")
			}
		}, []string{"--fail-on", "warn", "--pings-per-minute", "10"}, 0, []string{"limit 10"}, ""},
		{"failure fails", func(c *reportClient) {
			c.get("/api/v1/referrals/trials", `{"unexpected":"body"}`)
		}, nil, 1, []string{"sandbox-partner, program Go-http-client/1.1: FAIL", "content-types", "fail", "GET with a body"}, "1 check failed"},
		{"an unknown --client-id fails", func(c *reportClient) {
			c.get("/api/v1/referrals/trials?client_secret=oops", "")
		}, []string{"--client-id", "sandbox-partner-2"}, 1, nil, "no request from client sandbox-partner-2"},
		{"an empty --client-id means every client", func(c *reportClient) {}, []string{"--client-id", ""}, 0, []string{"sandbox-partner"}, ""},
		{"bad --fail-on is a usage error", func(c *reportClient) {}, []string{"--fail-on", "never"}, 2, nil, "--fail-on must be warn or fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveSandbox(t, sandbox.Config{})
			tt.play(newReportClient(t, srv))
			code, out, stderr := runReportCLI(t, nil, append([]string{"--url", srv.URL}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, out, stderr)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q lacks %q", stderr, tt.wantStderr)
			}
		})
	}
}

func TestReportEmptyJournalFails(t *testing.T) {
	srv := serveSandbox(t, sandbox.Config{})
	code, out, stderr := runReportCLI(t, nil, "--url", srv.URL)
	if code != 1 || !strings.Contains(stderr, "holds no client requests") || !strings.Contains(out, "No client requests") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
}

func TestReportJSONAndAdminToken(t *testing.T) {
	srv := serveSandbox(t, sandbox.Config{AdminToken: "admin-s3cret"})
	c := newReportClient(t, srv)
	c.get("/api/v1/referrals/trials", "")

	code, _, stderr := runReportCLI(t, nil, "--url", srv.URL)
	if code != 1 || !strings.Contains(stderr, "--admin-token") {
		t.Errorf("without the admin token: exit %d, stderr %q", code, stderr)
	}
	code, out, stderr := runReportCLI(t, map[string]string{"SANDBOX_ADMIN_TOKEN": "admin-s3cret"}, "--url", srv.URL, "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var r conformance.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json output is not a report: %v\n%s", err, out)
	}
	if len(r.Clients) != 1 || r.Clients[0].ClientID != defaultClientID || len(r.Clients[0].Checks) != len(conformance.CheckIDs()) {
		t.Errorf("report %+v", r)
	}
}

func TestEvidenceCell(t *testing.T) {
	tests := []struct {
		ids  []string
		want string
	}{
		{nil, "-"},
		{[]string{"a", "b", "c"}, "a b c"},
		{[]string{"a", "b", "c", "d", "e"}, "a b c +2 more"},
	}
	for _, tt := range tests {
		if got := evidenceCell(tt.ids); got != tt.want {
			t.Errorf("evidenceCell(%v) = %q, want %q", tt.ids, got, tt.want)
		}
	}
}
