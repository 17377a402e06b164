package sandbox_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestConformanceReportListsUnknownClientsApart makes a token request with
// a client id the sandbox does not know: the report lists it apart, with
// what it tried, and never judges it as a client (a typo in a job's client
// id must not read "nobody: PASS").
func TestConformanceReportListsUnknownClientsApart(t *testing.T) {
	sb := newConformanceSandbox(t)
	const wrongSecret = "a-secret-that-must-not-leak"
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"nobody"},
		"client_secret": {wrongSecret}, "scope": {idp.DefaultResource + "/.default"}}
	tokenPath := "/" + idp.DefaultTenant + "/oauth2/v2.0/token"
	resp, err := sb.tlsClient.Post(sb.tls.URL+tokenPath, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Fatal("a token for an unknown client")
	}
	requestID := resp.Header.Get(sandbox.RequestIDHeader)

	for _, query := range []string{"", "?clientId=nobody"} {
		status, r := sb.report(query)
		if status != http.StatusOK {
			t.Fatalf("report%s: %d", query, status)
		}
		for _, c := range r.Clients {
			if c.ClientID == "nobody" {
				t.Errorf("report%s judges the unknown client nobody as a client: %s", query, c.Result)
			}
		}
		if len(r.UnknownClients) != 1 {
			t.Fatalf("report%s: unknown clients %+v, want nobody", query, r.UnknownClients)
		}
		u := r.UnknownClients[0]
		if u.ClientID != "nobody" || u.Requests != 1 || len(u.Attempts) != 1 {
			t.Fatalf("report%s: unknown client %+v, want nobody with its one attempt", query, u)
		}
		if a := u.Attempts[0]; a.Method != http.MethodPost || a.Path != tokenPath || a.Status != resp.StatusCode || a.RequestID != requestID {
			t.Errorf("report%s: attempt %+v, want POST %s answered %d as request %s", query, a, tokenPath, resp.StatusCode, requestID)
		}
	}

	raw, err := sb.tlsClient.Get(sb.adminBaseURL + "/__sandbox/report")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Body.Close()
	body, _ := io.ReadAll(raw.Body)
	if strings.Contains(string(body), wrongSecret) {
		t.Error("the report shows the secret the unknown client sent")
	}
}
