package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestReportListsUnknownClientsApart runs `report` after a token request
// with a client id the sandbox does not know: the table lists it apart as
// an unknown client with what it tried, never as a passing client, and a
// journal with only such requests fails the gate with the ids to check.
func TestReportListsUnknownClientsApart(t *testing.T) {
	srv := serveSandbox(t, sandbox.Config{})
	tokenPath := "/" + idp.DefaultTenant + "/oauth2/v2.0/token"
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"nobody"},
		"client_secret": {"wrong-secret"}, "scope": {defaultScope}}
	resp, err := http.Post(srv.URL+tokenPath, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	code, out, stderr := runReportCLI(t, nil, "--url", srv.URL)
	if code != 1 || !strings.Contains(stderr, "only unknown client ids did (nobody)") {
		t.Errorf("only an unknown client: exit %d, stderr %q; want 1 naming nobody", code, stderr)
	}
	for _, want := range []string{"Unknown clients", "nobody: 1 request\n", "POST " + tokenPath, resp.Header.Get(sandbox.RequestIDHeader)} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"nobody: PASS", "nobody: NOT-EXERCISED", "No client requests", "wrong-secret"} {
		if strings.Contains(out, bad) {
			t.Errorf("stdout shows %q:\n%s", bad, out)
		}
	}

	// A real client's one request is judged, in the singular; the unknown
	// client stays apart.
	newReportClient(t, srv)
	code, out, stderr = runReportCLI(t, nil, "--url", srv.URL)
	if code != 0 {
		t.Errorf("with a real client: exit %d, stderr %q", code, stderr)
	}
	judged, apart, _ := strings.Cut(out, "Unknown clients")
	if !strings.Contains(judged, "sandbox-partner, program Go-http-client/1.1: PASS (1 request;") || strings.Contains(judged, "nobody") || !strings.Contains(apart, "nobody: 1 request") {
		t.Errorf("report:\n%s", out)
	}
}
