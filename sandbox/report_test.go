package sandbox_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/conformance"
)

// conformanceSandbox is one sandbox answering on an HTTPS and a plain
// HTTP address, so that a client can be caught using plain HTTP.
type conformanceSandbox struct {
	t          *testing.T
	tls, plain *httptest.Server
	clock      *clock.Adjustable
	// slept is how long the scripted client has slept: it moves the
	// "real" time under the sandbox clock, not the clock's offset, since
	// a client that sleeps is not a QA engineer moving the sandbox clock.
	slept        *sleptTime
	tlsClient    *http.Client
	plainClient  *http.Client
	adminBaseURL string
}

func newConformanceSandbox(t *testing.T) *conformanceSandbox {
	t.Helper()
	// Tokens are issued for the public (HTTPS) address, so that the
	// plain address accepts them too and only the scheme differs.
	var handler http.Handler
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	slept := &sleptTime{}
	in, err := sandbox.Open(sandbox.Config{PublicURL: "https://" + tlsSrv.Listener.Addr().String(), Clock: clock.NewAdjustable(slept.now)})
	if err != nil {
		tlsSrv.Close()
		t.Fatal(err)
	}
	handler = in.Server
	tlsSrv.StartTLS()
	plainSrv := httptest.NewServer(in.Server)
	t.Cleanup(func() {
		tlsSrv.Close()
		plainSrv.Close()
		_ = in.Close()
	})
	return &conformanceSandbox{
		t: t, tls: tlsSrv, plain: plainSrv, clock: in.Clock, slept: slept,
		tlsClient: tlsSrv.Client(), plainClient: plainSrv.Client(), adminBaseURL: tlsSrv.URL,
	}
}

// addRule adds a failure rule through the admin API.
func (sb *conformanceSandbox) addRule(rule map[string]any) {
	sb.t.Helper()
	data, _ := json.Marshal(rule)
	resp, err := sb.tlsClient.Post(sb.adminBaseURL+"/__sandbox/scenarios", "application/json", bytes.NewReader(data))
	if err != nil {
		sb.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		body, _ := io.ReadAll(resp.Body)
		sb.t.Fatalf("add rule %v: %d %s", rule, resp.StatusCode, body)
	}
}

// report fetches GET /__sandbox/report with query over HTTPS.
func (sb *conformanceSandbox) report(query string) (int, conformance.Report) {
	sb.t.Helper()
	resp, err := sb.tlsClient.Get(sb.adminBaseURL + "/__sandbox/report" + query)
	if err != nil {
		sb.t.Fatal(err)
	}
	defer resp.Body.Close()
	var r conformance.Report
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			sb.t.Fatal(err)
		}
	}
	return resp.StatusCode, r
}

// scriptedClient is a partner client written the way the interface
// document asks (cache the token, renew it 60 s ahead, recover from 401,
// honour Retry-After, back off exponentially), except for flaw: the id of
// the one rule it breaks. Its sleeps move the sandbox clock, so the test
// takes no real time. broke collects the request ids that show the flaw.
type scriptedClient struct {
	sb      *conformanceSandbox
	flaw    string
	token   string
	expires time.Time // by the client's reckoning
	last    int       // status of the last response
	// lastToken is the request id of the latest token request.
	lastToken string
	broke     []string
}

const conformanceClient = "sandbox-partner"

func (c *scriptedClient) sleep(d time.Duration) { c.sb.slept.add(d) }

// sleptTime is real time plus the time a scripted client slept.
type sleptTime struct {
	mu sync.Mutex
	d  time.Duration
}

func (s *sleptTime) now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Now().Add(s.d)
}

func (s *sleptTime) add(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d += d
}

// note records id as evidence when the client has flaw.
func (c *scriptedClient) note(flaw string, ids ...string) {
	if c.flaw == flaw {
		c.broke = append(c.broke, ids...)
	}
}

// exchange sends one request and returns the status, Retry-After and the
// sandbox's request id.
func (c *scriptedClient) exchange(req *http.Request) (status, retryAfter int, id string) {
	t := c.sb.t
	t.Helper()
	client := c.sb.tlsClient
	if req.URL.Scheme == "http" {
		client = c.sb.plainClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	retryAfter, _ = strconv.Atoi(resp.Header.Get("Retry-After"))
	c.last = resp.StatusCode
	return resp.StatusCode, retryAfter, resp.Header.Get(sandbox.RequestIDHeader)
}

// fetchToken asks for a token. The flawed reuses-tokens client's tokens
// are evidence, except one fetched to recover from a 401 and renewals.
func (c *scriptedClient) fetchToken() {
	t := c.sb.t
	t.Helper()
	recovering := c.last == http.StatusUnauthorized
	// A token replaced inside the 5 minutes at which MSAL renews: a renewal.
	renewing := c.token != "" && !c.sb.clock.Now().Before(c.expires.Add(-idp.LibraryRefreshMargin))
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {conformanceClient},
		"client_secret": {conformanceClient + "-secret"}, "scope": {idp.DefaultResource + "/.default"}}
	req, _ := http.NewRequest(http.MethodPost, c.sb.tls.URL+"/"+idp.DefaultTenant+"/oauth2/v2.0/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.sb.tlsClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&tok) != nil {
		t.Fatalf("token: %d", resp.StatusCode)
	}
	// A second short, as the token's expiry is whole seconds.
	c.token, c.expires = tok.AccessToken, c.sb.clock.Now().Add(time.Duration(tok.ExpiresIn-1)*time.Second)
	c.last = resp.StatusCode
	c.lastToken = resp.Header.Get(sandbox.RequestIDHeader)
	if !recovering && !renewing {
		c.note(conformance.CheckReusesTokens, c.lastToken)
	}
}

// ensureToken fetches a token when the client has none or, unless it
// renews only when refused, when its token has less than 60 s left.
func (c *scriptedClient) ensureToken() {
	switch {
	case c.token == "", c.flaw == conformance.CheckReusesTokens:
		c.fetchToken()
	case c.flaw != conformance.CheckRenewsBeforeExpiry && !c.sb.clock.Now().Before(c.expires.Add(-60*time.Second)):
		c.fetchToken()
	}
}

// send makes one attempt with the current token. JSON bodies are sent as
// application/json; mods may change the request.
func (c *scriptedClient) send(method, path string, body any, mods ...func(*http.Request)) (status, retryAfter int, id string) {
	var reader io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		reader = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, c.sb.tls.URL+path, reader)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	for _, m := range mods {
		m(req)
	}
	return c.exchange(req)
}

// call is the client's API call with its retry policy; it returns the
// request ids of every attempt.
func (c *scriptedClient) call(method, path string, body any, mods ...func(*http.Request)) []string {
	var ids []string
	backoff := time.Second
	refused := false
	for attempt := 1; ; attempt++ {
		c.ensureToken()
		status, retryAfter, id := c.send(method, path, body, mods...)
		ids = append(ids, id)
		if c.flaw == conformance.CheckHonoursRetryAfter {
			retryAfter = 0 // treats a 503 as any 5xx
		}
		switch {
		case attempt >= 5:
			return ids
		case status == http.StatusUnauthorized && !refused:
			refused = true
			if c.flaw != conformance.CheckExpiredToken {
				c.token = "" // the remedy: a new token, then retry
			}
		case retryAfter > 0:
			c.sleep(time.Duration(retryAfter) * time.Second)
		case status >= 500:
			c.sleep(backoff)
			if c.flaw != conformance.CheckBacksOff {
				backoff *= 2
			}
		default:
			return ids
		}
	}
}

func (c *scriptedClient) get(path string) []string { return c.call(http.MethodGet, path, nil) }

// script exercises every rule, breaking c.flaw where it applies.
func (c *scriptedClient) script() {
	trials := "/api/v1/referrals/trials"
	ping := c.get("/health/ping")
	c.note(conformance.CheckPingsSparingly, ping...)
	for range 5 {
		c.sleep(time.Second)
		c.get(trials)
	}
	referral := map[string]any{"trialId": "TRIAL-CARDIO-001",
		"patient": map[string]any{"firstName": "Ann", "lastName": "Lee", "dateOfBirth": "1980-04-12", "gender": "female"}}
	if c.flaw == conformance.CheckContentTypes {
		c.note(c.flaw, c.call(http.MethodPost, "/api/v1/referrals/", referral, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") })...)
		c.note(c.flaw, c.call(http.MethodGet, "/api/v1/referrals/", map[string]string{"q": "x"})...)
	} else {
		c.call(http.MethodPost, "/api/v1/referrals/", referral)
		c.get("/api/v1/referrals/")
	}
	c.loseAnswer(referral)
	switch c.flaw {
	case conformance.CheckNoCredentialsInURL:
		c.note(c.flaw, c.get(trials+"?access_token="+url.QueryEscape(c.token))...)
	case conformance.CheckHTTPSOnly:
		c.note(c.flaw, c.call(http.MethodGet, trials, nil, func(r *http.Request) { r.URL.Scheme, r.URL.Host = "http", c.sb.plain.Listener.Addr().String() })...)
	case conformance.CheckPingsSparingly:
		for range 30 {
			c.note(c.flaw, c.get("/health/ping")...)
		}
	}

	rule := func(status, retryAfter, times int) {
		c.sb.addRule(map[string]any{"clientId": conformanceClient, "endpoint": "api", "status": status, "retryAfterSeconds": retryAfter, "times": times})
	}
	// A 403: the client has its permissions reviewed and goes on with
	// other calls; the flawed one retries.
	c.sleep(time.Second)
	rule(http.StatusForbidden, 0, 1)
	c.note(conformance.CheckStopsOn403, c.get(trials)...)
	if c.flaw == conformance.CheckStopsOn403 {
		c.sleep(time.Second)
		c.note(c.flaw, c.get(trials)...)
	}
	c.get("/api/v1/referrals/")
	c.sleep(time.Second)
	rule(http.StatusUnauthorized, 0, 1)
	c.note(conformance.CheckExpiredToken, c.get(trials)...)
	c.sleep(time.Second)
	rule(http.StatusServiceUnavailable, 2, 1)
	c.note(conformance.CheckHonoursRetryAfter, c.get(trials)...)
	c.sleep(3 * time.Second)
	rule(http.StatusInternalServerError, 0, 3)
	c.note(conformance.CheckBacksOff, c.get(trials)...)

	// Renewal: a call with 90 s left, one with 50 s left (the client
	// renews first), one 50 s after the first token expired (past the
	// sandbox's 30 s clock skew allowance, so an expired token gets 401).
	c.sleep(c.expires.Sub(c.sb.clock.Now()) - 90*time.Second)
	c.get(trials)
	c.sleep(40 * time.Second)
	c.get(trials)
	c.sleep(100 * time.Second)
	last := c.get(trials)
	if len(last) == 2 {
		// The 401 on the expired token, and the token request it forced.
		c.note(conformance.CheckRenewsBeforeExpiry, last[0], c.lastToken)
	}
}

// clientReport returns the report's entry for the scripted client.
func clientReport(t *testing.T, r conformance.Report) conformance.ClientReport {
	t.Helper()
	for _, cr := range r.Clients {
		if cr.ClientID == conformanceClient {
			return cr
		}
	}
	t.Fatalf("no report for %s: %+v", conformanceClient, r)
	return conformance.ClientReport{}
}

func TestConformanceReportGoodClientPasses(t *testing.T) {
	sb := newConformanceSandbox(t)
	c := &scriptedClient{sb: sb}
	c.script()
	status, r := sb.report("?clientId=" + conformanceClient)
	if status != http.StatusOK {
		t.Fatalf("report: %d", status)
	}
	if !r.Settings.TLS {
		t.Error("report over HTTPS should judge https-only")
	}
	cr := clientReport(t, r)
	for _, check := range cr.Checks {
		if check.Result != conformance.Pass {
			t.Errorf("%s: %s (%s) %v", check.ID, check.Result, check.Explanation, check.Evidence)
		}
	}
	if len(cr.Checks) != len(conformance.CheckIDs()) || cr.Result != conformance.Pass {
		t.Errorf("client result %s with %d checks", cr.Result, len(cr.Checks))
	}
}

func TestConformanceReportCatchesEachFlaw(t *testing.T) {
	for _, flaw := range conformance.CheckIDs() {
		t.Run(flaw, func(t *testing.T) {
			sb := newConformanceSandbox(t)
			c := &scriptedClient{sb: sb, flaw: flaw}
			c.script()
			_, r := sb.report("")
			cr := clientReport(t, r)
			for _, check := range cr.Checks {
				switch {
				case check.ID == flaw && check.Result != conformance.Fail:
					t.Errorf("%s: %s (%s), want fail", check.ID, check.Result, check.Explanation)
				case check.ID != flaw && check.Result == conformance.Fail:
					t.Errorf("%s also fails: %s %v", check.ID, check.Explanation, check.Evidence)
				case check.ID == flaw:
					want := c.broke
					if len(want) > conformance.MaxEvidence {
						want = want[:conformance.MaxEvidence]
					}
					if !reflect.DeepEqual(check.Evidence, want) {
						t.Errorf("%s evidence %v, want %v", flaw, check.Evidence, want)
					}
				}
			}
		})
	}
}

func TestConformanceReportQuery(t *testing.T) {
	sb := newConformanceSandbox(t)
	// A request without a token names no client.
	resp, err := sb.tlsClient.Get(sb.tls.URL + "/api/v1/referrals/trials")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tests := []struct {
		query   string
		status  int
		clients []string
	}{
		{"", http.StatusOK, []string{conformance.Unidentified}},
		{"?clientId=" + url.QueryEscape(conformance.Unidentified), http.StatusOK, []string{conformance.Unidentified}},
		{"?clientId=nobody", http.StatusNotFound, nil},
		{"?pingsPerMinute=0", http.StatusBadRequest, nil},
		{"?maxAttempts=many", http.StatusBadRequest, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			status, r := sb.report(tt.query)
			if status != tt.status {
				t.Fatalf("status %d, want %d", status, tt.status)
			}
			var got []string
			for _, cr := range r.Clients {
				got = append(got, cr.ClientID)
			}
			if !reflect.DeepEqual(got, tt.clients) {
				t.Errorf("clients %v, want %v", got, tt.clients)
			}
		})
	}
	if _, r := sb.report("?pingsPerMinute=2&maxAttempts=3"); r.Settings.PingsPerMinute != 2 || r.Settings.MaxAttempts != 3 {
		t.Errorf("settings %+v", r.Settings)
	}
}

// loseAnswer makes the client's next referral lose its answer
// (drop-after-commit). The good client then reads its referrals back; the
// flawed resubmits-safely client sends the same referral again.
func (c *scriptedClient) loseAnswer(referral map[string]any) {
	t := c.sb.t
	t.Helper()
	c.sleep(time.Second)
	c.sb.addRule(map[string]any{"clientId": conformanceClient, "endpoint": "api", "method": "POST", "fault": "drop-after-commit", "times": 1})
	c.ensureToken()
	data, _ := json.Marshal(referral)
	req, _ := http.NewRequest(http.MethodPost, c.sb.tls.URL+"/api/v1/referrals/", bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	lost := "lost-answer-1"
	req.Header.Set(sandbox.RequestIDHeader, lost)
	if resp, err := c.sb.tlsClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("lost write answered %d, want no answer", resp.StatusCode)
	}
	c.sleep(time.Second)
	if c.flaw != conformance.CheckResubmitsSafely {
		c.get("/api/v1/referrals/")
		return
	}
	again := c.call(http.MethodPost, "/api/v1/referrals/", referral)
	locations := c.sb.journalLocations(lost, again[0])
	c.note(c.flaw, lost, again[0], locations[0], locations[1])
}

// journalLocations reads the Location the journal holds for each request
// id.
func (sb *conformanceSandbox) journalLocations(ids ...string) []string {
	sb.t.Helper()
	entries := sb.journalEntries(ids...)
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if entries[id].Location == "" {
			sb.t.Fatalf("the journal has no Location for %s", id)
		}
		out = append(out, entries[id].Location)
	}
	return out
}

// journalEntries reads the journal's entries for the request ids, waiting
// for entries the sandbox writes once a handler returned.
func (sb *conformanceSandbox) journalEntries(ids ...string) map[string]sandbox.JournalEntry {
	sb.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		resp, err := sb.tlsClient.Get(sb.adminBaseURL + "/__sandbox/requests?clientId=" + conformanceClient + "&limit=1000")
		if err != nil {
			sb.t.Fatal(err)
		}
		var page struct {
			Requests []sandbox.JournalEntry `json:"requests"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			sb.t.Fatal(err)
		}
		byID := map[string]sandbox.JournalEntry{}
		for _, e := range page.Requests {
			byID[e.RequestID] = e
		}
		found := 0
		for _, id := range ids {
			if _, ok := byID[id]; ok {
				found++
			}
		}
		if found == len(ids) {
			return byID
		}
	}
	sb.t.Fatalf("the journal lacks some of %v", ids)
	return nil
}
