package sandbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi/contract"
)

// Paths the failure tests call most.
const (
	tokenPath  = "/" + idp.DefaultTenant + "/oauth2/v2.0/token"
	trialsPath = "/api/v1/referrals/trials"
	pingPath   = "/health/ping"
	formType   = "application/x-www-form-urlencoded"
)

// as returns the sandbox reporting to t, so a subtest's failures stop the
// subtest and not its parent (FailNow must run on the test's own goroutine).
func (s *testSandbox) as(t *testing.T) *testSandbox {
	c := *s
	c.t = t
	return &c
}

// newHTTPRequest builds req against base exactly as do does.
func newHTTPRequest(base string, req request) (*http.Request, error) {
	var body io.Reader
	switch b := req.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(data)
	}
	method := req.method
	if method == "" {
		method = http.MethodGet
	}
	hr, err := http.NewRequest(method, base+req.path, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.token != "" {
		hr.Header.Set("Authorization", "Bearer "+req.token)
	}
	for k, v := range req.headers {
		hr.Header.Set(k, v)
	}
	if req.host != "" {
		hr.Host = req.host
	}
	switch {
	case req.unknownRoute:
		contract.MarkUnknownRoute(hr)
	case req.invalid:
		contract.MarkInvalid(hr)
	}
	return hr, nil
}

// send is do for goroutines and for calls expected to break: it returns the
// transport error instead of failing the test. A nil client means the
// contract-checking one (or the plain one when req.plain is set).
func (s *testSandbox) send(client *http.Client, req request) (*response, error) {
	hr, err := newHTTPRequest(s.URL, req)
	if err != nil {
		return nil, err
	}
	if client == nil {
		client = s.client
		if req.plain {
			client = s.plain
		}
	}
	resp, err := client.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return &response{Status: resp.StatusCode, Header: resp.Header}, err
	}
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// freshConnClient is a real client that opens a new connection for every
// request. Keep-alive would hide faults: Go's transport silently retries an
// idempotent request whose reused connection was reset or closed.
func freshConnClient(t *testing.T, timeout time.Duration) *http.Client {
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: timeout, Transport: tr}
}

// addRule posts rule and returns the id the sandbox gave it.
func (s *testSandbox) addRule(rule map[string]any) string {
	s.t.Helper()
	r := s.admin(http.MethodPost, "/__sandbox/scenarios", rule)
	if r.Status != http.StatusCreated {
		s.t.Fatalf("add rule %v: %d %s", rule, r.Status, r.Body)
	}
	var got struct {
		ID string `json:"id"`
	}
	r.decode(s.t, &got)
	if got.ID == "" {
		s.t.Fatalf("add rule: no id in %s", r.Body)
	}
	return got.ID
}

// activate turns a library scenario on, bound to clientID when not empty,
// and returns the ids of the rules it added.
func (s *testSandbox) activate(name, clientID string) []string {
	s.t.Helper()
	var body any
	if clientID != "" {
		body = map[string]string{"clientId": clientID}
	}
	r := s.admin(http.MethodPost, "/__sandbox/library/"+name, body)
	if r.Status != http.StatusCreated {
		s.t.Fatalf("activate %s for %q: %d %s", name, clientID, r.Status, r.Body)
	}
	var got struct {
		Rules []struct {
			ID string `json:"id"`
		} `json:"rules"`
	}
	r.decode(s.t, &got)
	ids := make([]string, len(got.Rules))
	for i, rule := range got.Rules {
		ids[i] = rule.ID
	}
	return ids
}

// journal returns the journal entries query selects, oldest first.
func (s *testSandbox) journal(query url.Values) []sandbox.JournalEntry {
	s.t.Helper()
	path := "/__sandbox/requests"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	r := s.admin(http.MethodGet, path, nil)
	if r.Status != http.StatusOK {
		s.t.Fatalf("journal %v: %d %s", query, r.Status, r.Body)
	}
	var got struct {
		Requests []sandbox.JournalEntry `json:"requests"`
	}
	r.decode(s.t, &got)
	return got.Requests
}

// journalOf returns the journal entries query selects once there are at
// least n, waiting 10 s at most: in shared mode another replica appends its
// entries in the background, a moment after it answered.
func (s *testSandbox) journalOf(query url.Values, n int) []sandbox.JournalEntry {
	s.t.Helper()
	var got []sandbox.JournalEntry
	testutil.Eventually(s.t, 10*time.Second, func() error {
		if got = s.journal(query); len(got) < n {
			return fmt.Errorf("%d journal entries for %v, want %d", len(got), query, n)
		}
		return nil
	})
	return got
}

// tokenForm is a client-credentials form.
func tokenForm(clientID, secret, scope string) url.Values {
	return url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}, "scope": {scope}}
}

// postToken sends a token request with form and extra headers through the
// contract-checking client.
func (s *testSandbox) postToken(form url.Values, headers map[string]string) *response {
	s.t.Helper()
	h := map[string]string{"Content-Type": formType}
	for k, v := range headers {
		h[k] = v
	}
	return s.do(request{method: http.MethodPost, path: tokenPath, body: form.Encode(), headers: h})
}

// accessTokenOf returns the access token of a successful token response.
func accessTokenOf(t *testing.T, r *response) string {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("token response %d %s", r.Status, r.Body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	r.decode(t, &tok)
	if tok.AccessToken == "" {
		t.Fatalf("no access_token in %s", r.Body)
	}
	return tok.AccessToken
}

// entraTimestamp is Entra's error timestamp: date and time with a trailing Z.
var entraTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z$`)

// guid matches a lower-case GUID.
var guid = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// checkEntraError checks a token endpoint error: status, JSON content type
// and exactly the six fields of the interface document (7.1), well formed.
func checkEntraError(t *testing.T, r *response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var raw map[string]json.RawMessage
	r.decode(t, &raw)
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"correlation_id", "error", "error_codes", "error_description", "timestamp", "trace_id"}
	if !slices.Equal(keys, want) {
		t.Errorf("body fields %v, want %v", keys, want)
	}
	var body idp.ErrorBody
	r.decode(t, &body)
	if body.Error != code {
		t.Errorf("error %q, want %q", body.Error, code)
	}
	if len(body.ErrorCodes) == 0 || !strings.HasPrefix(body.ErrorDescription, "AADSTS"+strconv.Itoa(body.ErrorCodes[0])) {
		t.Errorf("error_codes %v do not start the description %q", body.ErrorCodes, body.ErrorDescription)
	}
	if !entraTimestamp.MatchString(body.Timestamp) {
		t.Errorf("timestamp %q is not date and time with a trailing Z", body.Timestamp)
	}
	if !guid.MatchString(body.TraceID) || !guid.MatchString(body.CorrelationID) {
		t.Errorf("trace_id %q or correlation_id %q is not a GUID", body.TraceID, body.CorrelationID)
	}
}

// forced describes the answer a forced API or ping failure must have.
type forced struct {
	status int
	// rule is the Sandbox-Rule header: the rule id or the switch header.
	rule string
	// retryAfter is the Retry-After in seconds (429 and 503).
	retryAfter int
}

// problemTypes maps each forcible API status to its problem type.
var problemTypes = map[int]string{
	http.StatusUnauthorized:        sandbox.ProblemTypeUnauthorized,
	http.StatusForbidden:           sandbox.ProblemTypeForbidden,
	http.StatusTooManyRequests:     sandbox.ProblemTypeRateLimited,
	http.StatusInternalServerError: sandbox.ProblemTypeInternalError,
	http.StatusServiceUnavailable:  sandbox.ProblemTypeUnavailable,
}

// checkForcedProblem checks the whole answer of a forced API or ping
// failure: status, problem body, the challenge or retry headers its status
// calls for, and the rule that forced it.
func checkForcedProblem(t *testing.T, r *response, path string, want forced) {
	t.Helper()
	if r.Status != want.status {
		t.Fatalf("status %d, want %d; body %s", r.Status, want.status, r.Body)
	}
	p := r.problem(t)
	if p.Type != problemTypes[want.status] {
		t.Errorf("problem type %q, want %q", p.Type, problemTypes[want.status])
	}
	if p.Title != http.StatusText(want.status) || p.Detail == "" {
		t.Errorf("problem title %q detail %q", p.Title, p.Detail)
	}
	if p.Instance != path {
		t.Errorf("problem instance %q, want %q", p.Instance, path)
	}
	if id := r.Header.Get(sandbox.RequestIDHeader); id == "" || p.TraceID != id {
		t.Errorf("traceId %q, X-Request-Id %q", p.TraceID, id)
	}
	if got := r.Header.Get(sandbox.RuleHeader); got != want.rule {
		t.Errorf("%s %q, want %q", sandbox.RuleHeader, got, want.rule)
	}
	challenge := r.Header.Get("WWW-Authenticate")
	switch want.status {
	case http.StatusUnauthorized:
		if !strings.HasPrefix(challenge, "Bearer ") || !strings.Contains(challenge, `error="invalid_token"`) {
			t.Errorf("WWW-Authenticate %q, want a Bearer invalid_token challenge", challenge)
		}
	case http.StatusForbidden:
		if !strings.HasPrefix(challenge, "Bearer ") || !strings.Contains(challenge, `error="insufficient_scope"`) {
			t.Errorf("WWW-Authenticate %q, want a Bearer insufficient_scope challenge", challenge)
		}
	default:
		if challenge != "" {
			t.Errorf("unexpected WWW-Authenticate %q", challenge)
		}
	}
	wantRetry := ""
	if want.retryAfter > 0 {
		wantRetry = strconv.Itoa(want.retryAfter)
	}
	if got := r.Header.Get("Retry-After"); got != wantRetry {
		t.Errorf("Retry-After %q, want %q", got, wantRetry)
	}
	// A forced answer carries the client's RateLimit-* headers only when
	// rate limiting is on (TestForcedAnswersCarryTheClientsRateLimit);
	// when they are there, a 429 says nothing is left until Retry-After.
	if want.status == http.StatusTooManyRequests && r.Header.Get("RateLimit-Limit") != "" {
		if got := r.Header.Get("RateLimit-Remaining"); got != "0" {
			t.Errorf("RateLimit-Remaining %q, want 0", got)
		}
		if got := r.Header.Get("RateLimit-Reset"); got != wantRetry {
			t.Errorf("RateLimit-Reset %q, want %q", got, wantRetry)
		}
	}
}

// statusSequence sends n sequential trials requests with token and returns
// their statuses.
func (s *testSandbox) statusSequence(token string, n int) []int {
	s.t.Helper()
	out := make([]int, n)
	for i := range out {
		out[i] = s.do(request{path: trialsPath, token: token}).Status
	}
	return out
}

// countStatuses tallies statuses.
func countStatuses(statuses []int) map[int]int {
	n := map[int]int{}
	for _, st := range statuses {
		n[st]++
	}
	return n
}

// defaultFixtures loads the embedded fixtures the harness serves.
func defaultFixtures(t *testing.T) *fixtures.Set {
	t.Helper()
	set, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	return set
}
