package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// Embedded credentials (public test values, also in the README).
var partners = []struct{ id, secret string }{
	{"sandbox-partner", "sandbox-partner-secret"},
	{"sandbox-partner-2", "sandbox-partner-2-secret"},
}

const scope = "api://referrals-sandbox/.default"

// requestTimeout bounds every request of these tests, so a lost answer
// fails as an error instead of hanging the test.
const requestTimeout = 30 * time.Second

// idleConnTimeout is how long newClient's clients keep an unused
// connection: below the sandbox's ReadHeaderTimeout. The server closes a
// connection that has sent nothing for that long after it was accepted (a
// keep-alive connection only after its IdleTimeout), and Go's transport
// sometimes dials a connection that a request then does not use. Kept
// idle past ReadHeaderTimeout, such a connection could be handed to a POST
// just as the server closed it, which then failed with EOF or a reset: a
// soak under ./test -race lost a submission that way. Retiring idle
// connections first is what a careful pooled client does (docs/clients.md).
const idleConnTimeout = sandbox.ReadHeaderTimeout / 2

// newClient is an HTTP client that keeps up to conns connections alive to
// one host, as a partner's pooled client would.
func newClient(conns int) *http.Client {
	return &http.Client{
		Timeout:   requestTimeout,
		Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: idleConnTimeout},
	}
}

// TestClientRetiresIdleConnectionsFirst: newClient's clients close an idle
// connection before the sandbox could close it under them (see
// idleConnTimeout); it failed with the minute they kept one before. A test
// of the race itself would be a flaky one: it needs the transport to dial
// a connection it then leaves unused, and a request to pick that
// connection in the moment the server closes it.
func TestClientRetiresIdleConnectionsFirst(t *testing.T) {
	tr, ok := newClient(1).Transport.(*http.Transport)
	if !ok {
		t.Fatalf("newClient's transport is a %T", newClient(1).Transport)
	}
	if tr.IdleConnTimeout <= 0 || tr.IdleConnTimeout >= sandbox.ReadHeaderTimeout {
		t.Errorf("newClient keeps an idle connection %s; want more than 0 and less than the sandbox's ReadHeaderTimeout %s", tr.IdleConnTimeout, sandbox.ReadHeaderTimeout)
	}
}

// answer is a read response: status, headers, body.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request and reads the whole answer. A transport error or a
// body that cannot be read is returned as an error.
func do(ctx context.Context, c *http.Client, method, u, token, contentType string, body []byte, header http.Header) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return answer{}, fmt.Errorf("build %s %s: %w", method, u, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: read body: %w", method, u, err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// tokenForm is the client credentials request of one partner.
func tokenForm(id, secret string) []byte {
	return []byte(url.Values{
		"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {scope},
	}.Encode())
}

// accessToken parses a token response.
func accessToken(a answer) (string, error) {
	if a.status != http.StatusOK {
		return "", fmt.Errorf("token: status %d: %s", a.status, a.body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(a.body, &tok); err != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("token: no access_token in %s", a.body)
	}
	return tok.AccessToken, nil
}

// mustToken fetches an access token for a partner.
func mustToken(t *testing.T, c *http.Client, base, id, secret string) string {
	t.Helper()
	a, err := do(t.Context(), c, http.MethodPost, base+"/oauth2/v2.0/token", "", "application/x-www-form-urlencoded", tokenForm(id, secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := accessToken(a)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// listAllReferrals returns every referral of the token's partner.
func listAllReferrals(t *testing.T, c *http.Client, base, token string, max int) []referrals.Referral {
	return listAll[referrals.Referral](t, c, base+"/api/v1/referrals/", "referrals", token, max)
}

// listAll pages through a listing (500 a page) and returns the records under
// field. The number of pages is bounded by max/500+1. listURL may carry a
// query of its own.
func listAll[T any](t *testing.T, c *http.Client, listURL, field, token string, max int) []T {
	t.Helper()
	var all []T
	cursor := ""
	for page := 0; page <= max/500+1; page++ {
		u := listURL + "?limit=500"
		if strings.Contains(listURL, "?") {
			u = listURL + "&limit=500"
		}
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		a, err := do(t.Context(), c, http.MethodGet, u, token, "", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if a.status != http.StatusOK {
			t.Fatalf("list %s: status %d: %s", field, a.status, a.body)
		}
		var p map[string]json.RawMessage
		var items []T
		var next *string
		if err := json.Unmarshal(a.body, &p); err != nil {
			t.Fatalf("list %s: %v", field, err)
		}
		if err := json.Unmarshal(p[field], &items); err != nil {
			t.Fatalf("list %s: %v", field, err)
		}
		if err := json.Unmarshal(p["nextCursor"], &next); err != nil {
			t.Fatalf("list %s: nextCursor: %v", field, err)
		}
		all = append(all, items...)
		if next == nil {
			return all
		}
		cursor = *next
	}
	t.Fatalf("list %s: more than %d", field, max)
	return nil
}
