package contract

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// recorder is a testing.TB that records Errorf calls instead of failing,
// so the tests can prove that a violation does fail a test. Everything else
// goes to the real test.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Helper() {}

func (r *recorder) recorded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

// reply is what the fake server answers.
type reply struct {
	status  int
	headers map[string]string
	body    string
}

// Response headers every conforming answer carries.
const (
	ctJSON    = "application/json; charset=utf-8"
	ctProblem = "application/problem+json"
	requestID = "3f1c2a94-5d0e-4f6b-8a71-2c9e0b4d7f13"
)

func jsonReply(status int, body string, headers ...string) reply {
	return replyOf(status, ctJSON, body, headers...)
}

func problemReply(status int, headers ...string) reply {
	body := `{"type":"urn:referrals-sandbox:problem:x","title":"` + http.StatusText(status) + `","status":` + strconv.Itoa(status) + `,"traceId":"` + requestID + `"}`
	return replyOf(status, ctProblem, body, headers...)
}

// replyOf builds a reply with X-Request-Id and the given header pairs; a
// pair with an empty value removes the header.
func replyOf(status int, contentType, body string, pairs ...string) reply {
	h := map[string]string{"Content-Type": contentType, "X-Request-Id": requestID}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			delete(h, pairs[i])
		} else {
			h[pairs[i]] = pairs[i+1]
		}
	}
	return reply{status: status, headers: h, body: body}
}

func (rp reply) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	for k, v := range rp.headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rp.status)
	_, _ = io.WriteString(w, rp.body)
}

const (
	ping           = `{"message":"pong","timestamp":"2026-11-21T14:03:07.123456+00:00"}`
	patient        = `{"firstName":"Ada","lastName":"Lovelace","dateOfBirth":"1990-12-10","gender":"female"}`
	referralBody   = `{"trialId":"TRIAL-CARDIO-001","patient":` + patient + `}`
	referral       = `{"trialId":"TRIAL-CARDIO-001","outcomesId":"9635e059-4979-40b3-ba80-bba16cb9e0ed","clientId":"sandbox-partner","status":"received","submittedAt":"2026-11-21T14:03:07.123456Z","patient":` + patient + `}`
	qualified      = `{"externalSourceId":"case-1","clientId":"sandbox-partner","status":"received","submittedAt":"2026-11-21T14:03:07.123456Z","patient":` + patient + `,"auditTrail":[{"at":"2026-11-21T14:03:07.123456Z","action":"submitted","actor":"sandbox-partner"}]}`
	qualifiedBody  = `{"externalSourceId":"case-1","patient":` + patient + `}`
	token          = `{"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":"a.b.c"}`
	tokenError     = `{"error":"invalid_client","error_description":"AADSTS7000215: x","error_codes":[7000215],"timestamp":"2026-11-21 14:03:07Z","trace_id":"t","correlation_id":"c"}`
	tokenForm      = "grant_type=client_credentials&client_id=sandbox-partner&client_secret=s&scope=api%3A%2F%2Freferrals-sandbox%2F.default"
	formType       = "application/x-www-form-urlencoded"
	location       = "/api/v1/referrals/TRIAL-CARDIO-001/9635e059-4979-40b3-ba80-bba16cb9e0ed"
	adminClock     = `{"now":"2026-11-21T14:03:07.123456Z","offset":"1h0m0s","real":false}`
	wwwAuthInvalid = `Bearer realm="referrals-sandbox", error="invalid_token", error_description="access token expired"`
)

func TestCheckerFailsTheTestOnViolations(t *testing.T) {
	tests := []struct {
		name        string
		method      string
		path        string
		contentType string
		body        string
		mark        string
		reply       reply
		// want is a fragment of the one expected violation; "" means the
		// exchange conforms and the test must not fail.
		want string
	}{
		// Conforming exchanges.
		{name: "ping", method: "GET", path: "/health/ping", reply: jsonReply(200, ping)},
		{name: "401 with challenge", method: "GET", path: "/health/ping", reply: problemReply(401, "WWW-Authenticate", wwwAuthInvalid)},
		{name: "403 without challenge", method: "GET", path: "/api/v1/referrals/trials", reply: problemReply(403)},
		{name: "empty trials list", method: "GET", path: "/api/v1/referrals/trials", reply: jsonReply(200, `{"trials":[]}`)},
		{name: "429 with Retry-After", method: "GET", path: "/health/ping", reply: problemReply(429, "Retry-After", "3", "RateLimit-Limit", "10", "RateLimit-Remaining", "0", "RateLimit-Reset", "3")},
		{name: "last page", method: "GET", path: "/api/v1/referrals/?limit=10", reply: jsonReply(200, `{"referrals":[`+referral+`],"nextCursor":null}`)},
		{name: "list without slash", method: "GET", path: "/api/v1/referrals", reply: jsonReply(200, `{"referrals":[],"nextCursor":"abc"}`)},
		{name: "referral created", method: "POST", path: "/api/v1/referrals/", contentType: "application/json", body: referralBody,
			reply: jsonReply(201, referral, "Location", location)},
		{name: "unknown request fields are fine", method: "POST", path: "/api/v1/referrals", contentType: "application/json",
			body: `{"trialId":"T","patient":` + patient + `,"foo":1}`, reply: jsonReply(201, referral, "Location", location, "Sandbox-Warning", "unknown fields ignored: foo")},
		{name: "qualified created", method: "POST", path: "/api/v1/referrals/qualified", contentType: "application/json", body: qualifiedBody,
			reply: jsonReply(201, qualified, "Location", "/api/v1/referrals/qualified/case-1")},
		{name: "qualified conflict", method: "POST", path: "/api/v1/referrals/qualified", contentType: "application/json", body: qualifiedBody,
			reply: problemReply(409, "Location", "/api/v1/referrals/qualified/case-1")},
		{name: "404 for a malformed id", method: "GET", path: "/api/v1/referrals/qualified/not%20an%20id", reply: problemReply(404)},
		{name: "referral read", method: "GET", path: "/api/v1/referrals/NCT05550001/9635e059-4979-40b3-ba80-bba16cb9e0ed", reply: jsonReply(200, referral)},
		{name: "problem with charset", method: "GET", path: "/api/v1/referrals/T/O", reply: replyOf(404, ctProblem+"; charset=utf-8", `{"type":"t","title":"Not Found","status":404}`)},
		{name: "token issued", method: "POST", path: "/5f0a9c4e-3b1d-4e8a-9c27-0d1e2f3a4b5c/oauth2/v2.0/token", contentType: formType, body: tokenForm,
			reply: jsonReply(200, token, "Cache-Control", "no-store, no-cache")},
		{name: "token error", method: "POST", path: "/oauth2/v2.0/token", contentType: formType, body: tokenForm, reply: jsonReply(401, tokenError)},
		{name: "health", method: "GET", path: "/__sandbox/health", reply: jsonReply(200, `{"status":"ok"}`)},
		{name: "openapi.json", method: "GET", path: "/api/v1/openapi.json", reply: jsonReply(200, `{"openapi":"3.0.3","info":{},"paths":{}}`)},

		// Deliberately broken requests, marked.
		{name: "marked invalid value, 422", method: "POST", path: "/api/v1/referrals/", contentType: "application/json",
			body: strings.Replace(referralBody, "female", "F", 1), mark: SkipRequest, reply: problemReply(422)},
		{name: "marked malformed JSON, 400", method: "POST", path: "/api/v1/referrals/qualified", contentType: "application/json",
			body: `{"externalSourceId":`, mark: SkipRequest, reply: problemReply(400)},
		{name: "marked wrong content type, 415", method: "POST", path: "/api/v1/referrals/", contentType: "text/plain",
			body: referralBody, mark: SkipRequest, reply: problemReply(415)},
		{name: "marked bad limit, 400", method: "GET", path: "/api/v1/referrals/?limit=0", mark: SkipRequest, reply: problemReply(400)},
		{name: "marked unknown path, 404", method: "GET", path: "/api/v2/referrals", mark: SkipRoute, reply: problemReply(404)},
		{name: "marked unknown method, 405", method: "DELETE", path: "/api/v1/referrals/trials", mark: SkipRoute, reply: problemReply(405, "Allow", "GET")},
		{name: "marked token GET, Entra 405", method: "GET", path: "/oauth2/v2.0/token", mark: SkipRoute,
			reply: jsonReply(405, strings.Replace(tokenError, "invalid_client", "invalid_request", 1), "Allow", "POST")},

		// HEAD.
		{name: "HEAD health", method: "HEAD", path: "/__sandbox/health", reply: jsonReply(200, "")},
		{name: "HEAD not supported", method: "HEAD", path: "/health/ping", reply: problemReply(405, "Allow", "GET")},
		{name: "HEAD without request id", method: "HEAD", path: "/__sandbox/health", reply: jsonReply(200, "", "X-Request-Id", ""), want: `"X-Request-Id" missing`},

		// Violations by the server.
		{name: "missing request id", method: "GET", path: "/health/ping", reply: jsonReply(200, ping, "X-Request-Id", ""), want: `"X-Request-Id" missing`},
		{name: "malformed request id", method: "GET", path: "/health/ping", reply: jsonReply(200, ping, "X-Request-Id", "a b"), want: `"X-Request-Id" doesn't match`},
		{name: "body breaks schema", method: "GET", path: "/health/ping", reply: jsonReply(200, `{"message":"ping","timestamp":"2026-11-21T14:03:07.123456+00:00"}`), want: "doesn't match schema"},
		{name: "timestamp without fraction", method: "GET", path: "/health/ping", reply: jsonReply(200, `{"message":"pong","timestamp":"2026-11-21T14:03:07+00:00"}`), want: "doesn't match schema"},
		{name: "undocumented status", method: "GET", path: "/health/ping", reply: jsonReply(418, ping), want: "status is not supported (documented: 200, 400, 401, 403, 404, 405, 429, 500, 503)"},
		{name: "undocumented error status", method: "GET", path: "/api/v1/referrals/trials", reply: problemReply(409), want: "status is not supported"},
		{name: "error answer breaks the problem schema", method: "GET", path: "/api/v1/referrals/trials", reply: replyOf(404, ctProblem, `{"title":"Not Found","status":404}`), want: `property "type" is missing`},

		// The admin API, held to its own document.
		{name: "admin clock", method: "GET", path: "/__sandbox/clock", reply: jsonReply(200, adminClock, "Cache-Control", "no-store")},
		{name: "admin 401 with challenge", method: "GET", path: "/__sandbox/clock", reply: problemReply(401, "WWW-Authenticate", `Bearer realm="referrals-sandbox admin"`)},
		{name: "admin document without a token", method: "GET", path: "/__sandbox/openapi.json", reply: jsonReply(200, `{"openapi":"3.0.3","info":{},"paths":{}}`)},
		{name: "admin body breaks schema", method: "GET", path: "/__sandbox/clock", reply: jsonReply(200, `{"now":"2026-11-21T14:03:07Z","offset":"0s","real":true}`, "Cache-Control", "no-store"), want: "doesn't match schema"},
		{name: "admin without Cache-Control", method: "GET", path: "/__sandbox/clock", reply: jsonReply(200, adminClock), want: `"Cache-Control" missing`},
		{name: "admin 401 without challenge", method: "GET", path: "/__sandbox/clock", reply: problemReply(401), want: `"WWW-Authenticate" missing`},
		{name: "admin undocumented status", method: "GET", path: "/__sandbox/clock", reply: problemReply(409), want: "status is not supported"},
		{name: "admin request breaks schema", method: "POST", path: "/__sandbox/clock", contentType: "application/json", body: `{"advance":3600}`,
			reply: jsonReply(200, adminClock, "Cache-Control", "no-store"), want: "request does not conform"},
		{name: "admin 204", method: "DELETE", path: "/__sandbox/requests", reply: replyOf(204, "", "", "Cache-Control", "no-store", "Content-Type", "")},
		{name: "wrong content type", method: "GET", path: "/health/ping", reply: replyOf(200, "text/plain", ping), want: "Content-Type"},
		{name: "error not a problem", method: "GET", path: "/api/v1/referrals/trials", reply: jsonReply(500, `{"error":"boom"}`), want: "Content-Type"},
		{name: "problem without status", method: "GET", path: "/api/v1/referrals/trials", reply: replyOf(500, ctProblem, `{"type":"t","title":"x"}`), want: "doesn't match schema"},
		{name: "401 without challenge", method: "GET", path: "/health/ping", reply: problemReply(401), want: `"WWW-Authenticate" missing`},
		{name: "429 without Retry-After", method: "GET", path: "/health/ping", reply: problemReply(429), want: `"Retry-After" missing`},
		{name: "created without Location", method: "POST", path: "/api/v1/referrals/qualified", contentType: "application/json", body: qualifiedBody,
			reply: jsonReply(201, qualified), want: `"Location" missing`},
		{name: "nextCursor missing", method: "GET", path: "/api/v1/referrals/", reply: jsonReply(200, `{"referrals":[]}`), want: "doesn't match schema"},
		{name: "token without Cache-Control", method: "POST", path: "/oauth2/v2.0/token", contentType: formType, body: tokenForm,
			reply: jsonReply(200, token), want: `"Cache-Control" missing`},
		{name: "token error as problem", method: "POST", path: "/oauth2/v2.0/token", contentType: formType, body: tokenForm,
			reply: problemReply(401), want: "Content-Type"},
		{name: "marked invalid, undocumented answer", method: "POST", path: "/api/v1/referrals/", contentType: "application/json",
			body: "{", mark: SkipRequest, reply: jsonReply(200, referral), want: "status is not supported"},

		// Violations by the test's own requests.
		{name: "unmarked invalid body", method: "POST", path: "/api/v1/referrals/", contentType: "application/json",
			body: strings.Replace(referralBody, "female", "F", 1), reply: problemReply(422), want: "request does not conform"},
		{name: "unmarked bad limit", method: "GET", path: "/api/v1/referrals/?limit=501", reply: problemReply(400), want: "request does not conform"},
		{name: "unmarked unknown path", method: "GET", path: "/api/v1/nope", reply: problemReply(404), want: "not in the document"},
		{name: "unmarked unknown method", method: "DELETE", path: "/health/ping", reply: problemReply(405, "Allow", "GET"), want: "not in the document"},
		{name: "unknown mark", method: "GET", path: "/health/ping", mark: "yes", reply: jsonReply(200, ping), want: "unknown value"},

		// Unknown routes answered wrongly.
		{name: "marked route is documented", method: "GET", path: "/health/ping", mark: SkipRoute, reply: problemReply(404), want: "the document has GET /health/ping"},
		{name: "marked unknown, answered 200", method: "GET", path: "/api/v2/x", mark: SkipRoute, reply: jsonReply(200, ping), want: "not 404 or 405"},
		{name: "405 without Allow", method: "PUT", path: "/api/v1/referrals/trials", mark: SkipRoute, reply: problemReply(405), want: `"Allow" missing`},
		{name: "404 as plain text", method: "GET", path: "/nope", mark: SkipRoute, reply: replyOf(404, "text/plain", "404 page not found"), want: "Content-Type"},
	}
	// One server and one checker for every case (building a checker loads
	// and validates both documents, which is slow under -race): the server
	// answers the current case's reply, and Exchange returns the violations
	// Transport would fail the test with (TestTransportFailsTheTest).
	var current atomic.Pointer[reply]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { current.Load().ServeHTTP(w, r) }))
	defer srv.Close()
	checker := New(t, srv.URL)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			current.Store(&tc.reply)
			req, err := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+tc.path, bodyReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			if tc.mark != "" {
				req.Header.Set(SkipHeader, tc.mark)
			}
			res, err := checker.Exchange(nil, req)
			if err != nil {
				t.Fatalf("request: %v", err)
			}
			_ = res.Response.Body.Close()

			got := res.Violations
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("a conforming exchange failed the test:\n%s", strings.Join(got, "\n"))
			case tc.want != "" && len(got) != 1:
				t.Errorf("want exactly one violation containing %q, got %d:\n%s", tc.want, len(got), strings.Join(got, "\n"))
			case tc.want != "" && !strings.Contains(got[0], tc.want):
				t.Errorf("want a violation containing %q, got:\n%s", tc.want, got[0])
			}
			// Every message names the method, path and status.
			for _, msg := range got {
				prefix := "contract: " + tc.method + " " + strings.SplitN(tc.path, "?", 2)[0] + " -> " + strconv.Itoa(tc.reply.status) + ": "
				if !strings.HasPrefix(msg, strings.ReplaceAll(prefix, "%20", " ")) {
					t.Errorf("message %q does not start with %q", msg, prefix)
				}
			}
		})
	}
}

func bodyReader(body string) io.Reader {
	if body == "" {
		return nil
	}
	return strings.NewReader(body)
}

// A violation seen through Transport fails the test (with t.Errorf), and
// the response still reaches the caller.
func TestTransportFailsTheTest(t *testing.T) {
	srv := httptest.NewServer(jsonReply(418, ping))
	defer srv.Close()
	rec := &recorder{TB: t}
	resp, err := New(rec, srv.URL).Client().Get(srv.URL + "/health/ping")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	got := rec.recorded()
	if resp.StatusCode != 418 || len(got) != 1 || !strings.Contains(got[0], "status is not supported") {
		t.Errorf("status %d, violations %q; want 418 and one undocumented-status violation", resp.StatusCode, got)
	}
}

// The server must see exactly the request the test built, minus the mark;
// the test must read the response body the checker already read; and the
// test's own request must be left unchanged.
func TestTransportIsTransparent(t *testing.T) {
	var (
		gotBody, gotMark, gotCT string
		gotLength               int64
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody, gotMark, gotCT, gotLength = string(b), r.Header.Get(SkipHeader), r.Header.Get("Content-Type"), r.ContentLength
		problemReply(422).ServeHTTP(w, r)
	}))
	defer srv.Close()
	rec := &recorder{TB: t}
	client := New(rec, srv.URL).Client()

	body := `{"trialId":"","patient":{}}`
	req, err := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/api/v1/referrals/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	MarkInvalid(req)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}

	if errs := rec.recorded(); len(errs) > 0 {
		t.Errorf("unexpected violations: %v", errs)
	}
	if gotBody != body || gotLength != int64(len(body)) {
		t.Errorf("server got body %q (length %d), want %q", gotBody, gotLength, body)
	}
	if gotCT != "application/json" {
		t.Errorf("server got Content-Type %q", gotCT)
	}
	if gotMark != "" {
		t.Errorf("server saw %s: %q; the transport must strip it", SkipHeader, gotMark)
	}
	if want := problemReply(422).body; string(respBody) != want {
		t.Errorf("caller read response body %q, want %q", respBody, want)
	}
	if req.Header.Get(SkipHeader) != SkipRequest {
		t.Error("the transport changed the caller's request headers")
	}
}

func TestMarkHelpersSetTheHeader(t *testing.T) {
	req := httptest.NewRequest("GET", "/x", nil)
	MarkInvalid(req)
	if got := req.Header.Get(SkipHeader); got != SkipRequest {
		t.Errorf("MarkInvalid set %q, want %q", got, SkipRequest)
	}
	MarkUnknownRoute(req)
	if got := req.Header.Get(SkipHeader); got != SkipRoute {
		t.Errorf("MarkUnknownRoute set %q, want %q", got, SkipRoute)
	}
}

// failingTransport never reaches a server.
type failingTransport struct{}

var errUnreachable = errors.New("unreachable")

func (failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, errUnreachable }

func TestTransportErrorsReachTheCaller(t *testing.T) {
	rec := &recorder{TB: t}
	tr := New(rec, "http://127.0.0.1:8080").Transport(failingTransport{})
	req := httptest.NewRequest("GET", "http://127.0.0.1:8080/api/v1/nope", nil)
	req.RequestURI = "" // a client request, not a server one
	_, err := tr.RoundTrip(req)
	if !errors.Is(err, errUnreachable) {
		t.Errorf("RoundTrip error = %v, want %v", err, errUnreachable)
	}
	// The request violation is still reported, without a status.
	got := rec.recorded()
	if len(got) != 1 || !strings.Contains(got[0], "-> no response: ") {
		t.Errorf("want one violation reported with no response, got %v", got)
	}
}

func TestRequestsToAnotherHostAreNotMatched(t *testing.T) {
	srv := httptest.NewServer(problemReply(404))
	defer srv.Close()
	rec := &recorder{TB: t}
	// The checker expects another port; the same path on this host is not
	// the documented server.
	client := New(rec, "http://127.0.0.1:1").Client()
	resp, err := client.Get(srv.URL + "/health/ping")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := rec.recorded(); len(got) != 1 || !strings.Contains(got[0], "not in the document") {
		t.Errorf("want one 'not in the document' violation, got %v", got)
	}
}

func TestNewRejectsBadBaseURLs(t *testing.T) {
	for _, base := range []string{"", "/relative", "ftp://127.0.0.1", "http://", "://bad"} {
		if _, err := newChecker(t.Context(), base); err == nil {
			t.Errorf("newChecker(%q) succeeded, want an error", base)
		}
	}
	if _, err := newChecker(t.Context(), "http://127.0.0.1:8080/"); err != nil {
		t.Errorf("newChecker with a trailing slash: %v", err)
	}
}

// The checker is shared by concurrent requests (run with -race).
func TestConcurrentUse(t *testing.T) {
	srv := httptest.NewServer(jsonReply(200, ping))
	defer srv.Close()
	rec := &recorder{TB: t}
	client := New(rec, srv.URL).Client()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, err := client.Get(srv.URL + "/health/ping")
			if err != nil {
				t.Error(err)
				return
			}
			_ = resp.Body.Close()
		})
	}
	wg.Wait()
	if got := rec.recorded(); len(got) > 0 {
		t.Errorf("unexpected violations: %v", got)
	}
}
