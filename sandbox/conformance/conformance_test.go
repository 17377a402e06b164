package conformance

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// testOptions are the options the scripted clients are judged with: a low
// ping limit keeps the flawed client's evidence short.
func testOptions() Options { return Options{TLS: true, PingsPerMinute: 3} }

// script plays a client that exercises every rule: it pings, makes calls,
// recovers from a 401, waits out a 503's Retry-After, backs off through
// three 500s and renews its token 50 s before expiry. With flaw set to a
// check id it breaks that rule (and only that one) at one point, and
// returns the request ids that show it. Each request takes answer: the
// sandbox answers in well under a millisecond, its journal is precise to
// the microsecond.
func script(flaw string, answer time.Duration) (entries []journal.Entry, evidence []string) {
	s := newSim()
	s.answer = answer
	broke := func(ids ...string) { evidence = append(evidence, ids...) }
	// fetch is a token request; the token-per-call client's tokens are
	// evidence, except the one it fetches to recover from the 401.
	fetch := func(evidenceIfFlawed bool) {
		id := s.fetchToken()
		if flaw == CheckReusesTokens && evidenceIfFlawed {
			broke(id)
		}
	}
	// before runs before each call: the flawed client fetches a token.
	before := func() {
		if flaw == CheckReusesTokens {
			fetch(true)
		}
	}
	call := func(mods ...mod) string {
		before()
		return s.call(mods...)
	}
	fetch(true)
	before()
	if p := s.ping(); flaw == CheckPingsSparingly {
		broke(p) // in the busiest minute too
	}
	for range 6 {
		s.wait(time.Second)
		call()
	}
	s.wait(time.Second)
	if flaw == CheckContentTypes {
		broke(s.post(setHeader("Content-Type", "text/plain")))
		s.wait(time.Second)
		broke(call(bodyBytes(12)))
	} else {
		before()
		s.post()
	}
	// A write whose answer is lost: the client reads back first.
	s.wait(time.Second)
	lost := s.post(lostAnswer("sub-1", "/api/v1/referrals/T/1"))
	s.wait(time.Second)
	if flaw == CheckResubmitsSafely {
		broke(lost, s.post(submitted("sub-1", "/api/v1/referrals/T/2")), "/api/v1/referrals/T/1", "/api/v1/referrals/T/2")
	} else {
		call()
	}
	// A 403 on the qualified referrals: the client stops calling them (it
	// has its permissions reviewed) and carries on with what it may read.
	s.wait(time.Second)
	forbidden := call(path(http.MethodGet, "/api/v1/referrals/qualified"), status(http.StatusForbidden))
	s.wait(time.Second)
	if flaw == CheckStopsOn403 {
		broke(forbidden, call(path(http.MethodGet, "/api/v1/referrals/qualified"), status(http.StatusForbidden)))
	} else {
		call()
	}
	if flaw == CheckNoCredentialsInURL {
		s.wait(time.Second)
		broke(call(query("access_token=" + redact.Redacted + "&limit=5")))
	}
	if flaw == CheckHTTPSOnly {
		s.wait(time.Second)
		broke(call(plainHTTP()))
	}
	if flaw == CheckPingsSparingly {
		for range 13 {
			s.wait(time.Second)
			broke(s.ping())
		}
	}

	// A 401 on a valid token (revoked, say): new token, retry.
	s.wait(time.Second)
	refused := call(status(http.StatusUnauthorized))
	if flaw == CheckExpiredToken {
		broke(refused, s.call())
	} else {
		fetch(false)
		s.call()
	}

	// A 503 asking for 2 s, on a call the client renewed its token for
	// just before: that token request was in flight before the 503.
	s.wait(time.Second)
	if flaw != CheckReusesTokens {
		s.fetchToken()
	}
	unavailable := call(status(http.StatusServiceUnavailable), retryAfter(2))
	if flaw == CheckHonoursRetryAfter {
		s.wait(500 * time.Millisecond)
		broke(unavailable, call())
		s.wait(2 * time.Second) // so that only that retry was early
	} else {
		s.wait(2 * time.Second)
		call()
	}

	// Three 500s, retried after 1 s, 2 s, 4 s (or 1 s each when flawed).
	s.wait(time.Second)
	var run []string
	for i := range 3 {
		run = append(run, call(status(http.StatusInternalServerError)))
		wait := time.Second << i
		if flaw == CheckBacksOff {
			wait = time.Second
		}
		s.wait(wait)
	}
	run = append(run, call())
	if flaw == CheckBacksOff {
		broke(run...)
	}

	// Renewal: a call with 90 s left, then 40 s later the client renews
	// first (50 s left); the flawed client lets the token expire and
	// renews only after a 401.
	s.wait(s.expiresAt().Sub(s.now) - 90*time.Second)
	if flaw == CheckReusesTokens {
		fetch(false) // with 90 s left: a renewal, whatever the client's habit
	}
	s.call()
	if flaw == CheckRenewsBeforeExpiry {
		s.wait(100 * time.Second)
		expired := s.call()
		broke(expired, s.fetchToken())
		call()
	} else {
		// The token-per-call client renewed just before its last call.
		s.wait(40 * time.Second)
		if flaw != CheckReusesTokens {
			fetch(false)
		}
		call()
	}
	return s.entries, evidence
}

// checkByID returns the report's check id, failing the test without it.
func checkByID(t *testing.T, cr ClientReport, id string) Check {
	t.Helper()
	for _, c := range cr.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s in %+v", id, cr)
	return Check{}
}

// onlyClient returns the report's one client.
func onlyClient(t *testing.T, r Report) ClientReport {
	t.Helper()
	if len(r.Clients) != 1 {
		t.Fatalf("want one client, got %+v", r.Clients)
	}
	return r.Clients[0]
}

// answerTimes are how long the simulated sandbox takes per request: a
// loaded machine's milliseconds, and a fast machine's sub-millisecond
// answers (a token, and the quicker 503 of a failure rule), so the
// checks hold whatever the machine.
var answerTimes = []time.Duration{5 * time.Millisecond, 300 * time.Microsecond, 40 * time.Microsecond}

func TestGoodClientPassesEveryCheck(t *testing.T) {
	for _, answer := range answerTimes {
		t.Run(answer.String(), func(t *testing.T) { testGoodClientPasses(t, answer) })
	}
}

func testGoodClientPasses(t *testing.T, answer time.Duration) {
	entries, _ := script("", answer)
	cr := onlyClient(t, Evaluate(entries, testOptions()))
	if got, want := len(cr.Checks), len(CheckIDs()); got != want {
		t.Fatalf("%d checks, want %d", got, want)
	}
	for i, c := range cr.Checks {
		if c.ID != CheckIDs()[i] {
			t.Errorf("check %d is %s, want %s", i, c.ID, CheckIDs()[i])
		}
		if c.Result != Pass {
			t.Errorf("%s: %s (%s) %v, want pass", c.ID, c.Result, c.Explanation, c.Evidence)
		}
		if c.Title == "" || c.Explanation == "" {
			t.Errorf("%s: missing title or explanation: %+v", c.ID, c)
		}
	}
	if cr.Result != Pass || cr.Summary[Pass] != len(CheckIDs()) || cr.Requests != len(entries) {
		t.Errorf("client result %s, summary %v, requests %d (want %d)", cr.Result, cr.Summary, cr.Requests, len(entries))
	}
}

func TestEachFlawFailsExactlyItsCheck(t *testing.T) {
	for _, answer := range answerTimes {
		for _, flaw := range CheckIDs() {
			t.Run(answer.String()+"/"+flaw, func(t *testing.T) { testFlawFailsItsCheck(t, flaw, answer) })
		}
	}
}

func testFlawFailsItsCheck(t *testing.T, flaw string, answer time.Duration) {
	entries, want := script(flaw, answer)
	cr := onlyClient(t, Evaluate(entries, testOptions()))
	for _, c := range cr.Checks {
		if c.ID == flaw {
			continue
		}
		if c.Result == Fail {
			t.Errorf("%s also fails: %s %v", c.ID, c.Explanation, c.Evidence)
		}
	}
	c := checkByID(t, cr, flaw)
	if c.Result != Fail {
		t.Fatalf("%s: %s (%s), want fail", flaw, c.Result, c.Explanation)
	}
	if len(want) > MaxEvidence {
		want = want[:MaxEvidence]
	}
	if !reflect.DeepEqual(c.Evidence, want) {
		t.Errorf("%s evidence %v, want %v", flaw, c.Evidence, want)
	}
	if cr.Result != Fail || cr.Summary[Fail] != 1 {
		t.Errorf("client result %s, summary %v", cr.Result, cr.Summary)
	}
}

// TestReactiveRenewalWarnsOnExpiredToken: the client that renews only
// after a 401 fails renews-before-expiry; expired-token only warns, since
// it did recover.
func TestReactiveRenewalWarnsOnExpiredToken(t *testing.T) {
	entries, want := script(CheckRenewsBeforeExpiry, 5*time.Millisecond)
	c := checkByID(t, onlyClient(t, Evaluate(entries, testOptions())), CheckExpiredToken)
	if c.Result != Warn || !reflect.DeepEqual(c.Evidence, want[:1]) {
		t.Errorf("expired-token %s %v (%s), want warn %v", c.Result, c.Evidence, c.Explanation, want[:1])
	}
}

// single evaluates one client's entries and returns the check id.
func single(t *testing.T, s *sim, id string, opts Options) Check {
	t.Helper()
	return checkByID(t, onlyClient(t, Evaluate(s.entries, opts)), id)
}

func TestChecksJudgeEdgeCases(t *testing.T) {
	tests := []struct {
		name   string
		check  string
		opts   Options
		play   func(s *sim) []string // returns the expected evidence
		result Result
	}{
		{"token used in its last minute warns", CheckRenewsBeforeExpiry, Options{}, func(s *sim) []string {
			s.fetchToken()
			s.wait(lifetime - 30*time.Second)
			return []string{s.call()}
		}, Warn},
		{"token lapsed while idle then renewed passes", CheckRenewsBeforeExpiry, Options{}, func(s *sim) []string {
			s.fetchToken()
			s.call()
			s.wait(2 * time.Hour)
			s.fetchToken()
			s.call()
			return nil
		}, Pass},
		{"one token and no renewal is not exercised", CheckRenewsBeforeExpiry, Options{}, func(s *sim) []string {
			s.fetchToken()
			s.call()
			return nil
		}, NotExercised},
		{"expired token never renewed fails", CheckRenewsBeforeExpiry, Options{}, func(s *sim) []string {
			s.fetchToken()
			s.wait(2 * time.Hour)
			return []string{s.call()}
		}, Fail},
		{"stopping after a 401 warns", CheckExpiredToken, Options{}, func(s *sim) []string {
			s.fetchToken()
			return []string{s.call(status(http.StatusUnauthorized))}
		}, Warn},
		{"new token after a 401 and nothing more passes", CheckExpiredToken, Options{}, func(s *sim) []string {
			s.fetchToken()
			s.call(status(http.StatusUnauthorized))
			s.fetchToken()
			return nil
		}, Pass},
		{"no calls is not exercised", CheckExpiredToken, Options{}, func(s *sim) []string {
			s.fetchToken()
			return nil
		}, NotExercised},
		{"more than half as many tokens as calls warns", CheckReusesTokens, Options{}, func(s *sim) []string {
			a := s.fetchToken()
			s.call()
			s.call()
			b := s.fetchToken()
			s.call()
			return []string{a, b}
		}, Warn},
		{"two calls are too few to judge reuse", CheckReusesTokens, Options{}, func(s *sim) []string {
			s.fetchToken()
			s.call()
			s.fetchToken()
			s.call()
			return nil
		}, NotExercised},
		{"a request in flight when the 429 arrived is not early", CheckHonoursRetryAfter, Options{}, func(s *sim) []string {
			s.fetchToken()
			s.call(status(http.StatusTooManyRequests), retryAfter(1), took(200))
			// Started 100 ms into the 429's 200 ms, ended after it.
			s.now = s.now.Add(-100 * time.Millisecond)
			s.call(took(150))
			s.wait(time.Second)
			s.call()
			return nil
		}, Pass},
		{"a token request just before a sub-millisecond 503 is not early", CheckHonoursRetryAfter, Options{}, func(s *sim) []string {
			s.fetchToken(took(0.3))
			s.call(status(http.StatusServiceUnavailable), retryAfter(2), took(0.04))
			s.wait(2 * time.Second)
			s.call()
			return nil
		}, Pass},
		{"a request that started 2 µs before the 503 ended is not judged", CheckHonoursRetryAfter, Options{}, func(s *sim) []string {
			s.fetchToken()
			s.call(status(http.StatusServiceUnavailable), retryAfter(2), took(1))
			s.now = s.now.Add(-2 * time.Microsecond)
			s.call(took(0.5))
			return nil
		}, Pass},
		{"a request that started as the 503 ended is early", CheckHonoursRetryAfter, Options{}, func(s *sim) []string {
			s.fetchToken()
			a := s.call(status(http.StatusServiceUnavailable), retryAfter(2), took(0.04))
			return []string{a, s.call(took(0.04))}
		}, Fail},
		{"a token request too soon after a 503 is early", CheckHonoursRetryAfter, Options{}, func(s *sim) []string {
			a := s.fetchToken(status(http.StatusServiceUnavailable), retryAfter(3))
			s.wait(2 * time.Second)
			return []string{a, s.fetchToken()}
		}, Fail},
		{"waiting exactly Retry-After minus tolerance passes", CheckHonoursRetryAfter, Options{}, func(s *sim) []string {
			s.fetchToken()
			s.call(status(http.StatusTooManyRequests), retryAfter(1))
			s.wait(time.Second - retryAfterTolerance)
			s.call()
			return nil
		}, Pass},
		{"no Retry-After is not exercised", CheckHonoursRetryAfter, Options{}, func(s *sim) []string {
			s.fetchToken()
			s.call(status(http.StatusInternalServerError))
			s.call()
			return nil
		}, NotExercised},
		{"endless retries warn", CheckBacksOff, Options{MaxAttempts: 4}, func(s *sim) []string {
			s.fetchToken()
			var ids []string
			for i := range 5 {
				ids = append(ids, s.call(fault("connection_reset")))
				s.wait(time.Second << i)
			}
			return ids
		}, Warn},
		{"shrinking waits fail", CheckBacksOff, Options{}, func(s *sim) []string {
			s.fetchToken()
			var ids []string
			for _, w := range []time.Duration{4 * time.Second, 2 * time.Second, time.Second} {
				ids = append(ids, s.call(status(http.StatusBadGateway)))
				s.wait(w)
			}
			return append(ids, s.call())
		}, Fail},
		{"Retry-After waits are not judged", CheckBacksOff, Options{}, func(s *sim) []string {
			s.fetchToken()
			for range 4 {
				s.call(status(http.StatusServiceUnavailable), retryAfter(1))
				s.wait(time.Second)
			}
			s.call()
			return nil
		}, NotExercised},
		{"jittered exponential waits pass", CheckBacksOff, Options{}, func(s *sim) []string {
			s.fetchToken()
			for _, w := range []time.Duration{1200 * time.Millisecond, 1100 * time.Millisecond, 3 * time.Second, 7 * time.Second} {
				s.call(status(http.StatusInternalServerError))
				s.wait(w)
			}
			s.call()
			return nil
		}, Pass},
		{"pings over the limit warn", CheckPingsSparingly, Options{PingsPerMinute: 2}, func(s *sim) []string {
			s.fetchToken()
			var ids []string
			for range 3 {
				ids = append(ids, s.ping())
				s.wait(20 * time.Second)
			}
			return ids
		}, Warn},
		{"pings spread over minutes pass", CheckPingsSparingly, Options{PingsPerMinute: 2}, func(s *sim) []string {
			s.fetchToken()
			for range 6 {
				s.ping()
				s.wait(30 * time.Second)
			}
			return nil
		}, Pass},
		{"a chunked GET body fails", CheckContentTypes, Options{}, func(s *sim) []string {
			s.fetchToken()
			return []string{s.call(bodyBytes(-1))}
		}, Fail},
		{"a token request that is not a form fails", CheckContentTypes, Options{}, func(s *sim) []string {
			return []string{s.fetchToken(setHeader("Content-Type", "application/json"))}
		}, Fail},
		{"JSON Content-Type on a GET is allowed", CheckContentTypes, Options{}, func(s *sim) []string {
			s.fetchToken()
			s.call(setHeader("Content-Type", "application/json"))
			return nil
		}, Pass},
		{"a client secret in a token URL fails", CheckNoCredentialsInURL, Options{}, func(s *sim) []string {
			return []string{s.fetchToken(query("client_id=partner&client_secret=" + redact.Redacted))}
		}, Fail},
		{"paging parameters are not credentials", CheckNoCredentialsInURL, Options{}, func(s *sim) []string {
			s.fetchToken()
			s.call(query("cursor=abc&limit=10"))
			return nil
		}, Pass},
		{"https-only needs --tls", CheckHTTPSOnly, Options{TLS: false}, func(s *sim) []string {
			s.fetchToken(plainHTTP())
			return nil
		}, NotExercised},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSim()
			want := tt.play(s)
			c := single(t, s, tt.check, tt.opts)
			if c.Result != tt.result {
				t.Fatalf("%s: %s (%s), want %s", tt.check, c.Result, c.Explanation, tt.result)
			}
			if want == nil {
				want = []string{}
			}
			if !reflect.DeepEqual(c.Evidence, want) {
				t.Errorf("evidence %v, want %v", c.Evidence, want)
			}
		})
	}
}

func TestEvaluateGroupsClients(t *testing.T) {
	s := newSim()
	s.fetchToken()
	s.call()
	s.client = "another"
	s.fetchToken()
	s.client = ""
	s.call(plainHTTP(), query("access_token="+redact.Redacted))
	s.client = "aardvark"
	s.call()
	r := Evaluate(s.entries, Options{TLS: true, Now: s.now})
	var ids []string
	for _, c := range r.Clients {
		ids = append(ids, c.ClientID)
	}
	if want := []string{"aardvark", "another", "partner", Unidentified}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("clients %v, want %v", ids, want)
	}
	un := r.Clients[3]
	for _, c := range un.Checks {
		switch c.ID {
		case CheckNoCredentialsInURL, CheckHTTPSOnly:
			if c.Result != Fail || !reflect.DeepEqual(c.Evidence, []string{"req-4"}) {
				t.Errorf("unidentified %s: %s %v", c.ID, c.Result, c.Evidence)
			}
		case CheckContentTypes:
			if c.Result != Pass {
				t.Errorf("unidentified %s: %s", c.ID, c.Result)
			}
		default:
			if c.Result != NotExercised {
				t.Errorf("unidentified %s: %s, want not-exercised", c.ID, c.Result)
			}
		}
	}
	if r.GeneratedAt == "" || r.Settings.PingsPerMinute != DefaultPingsPerMinute || r.Settings.RenewalMarginSeconds != 60 || r.Settings.MaxAttempts != DefaultMaxAttempts {
		t.Errorf("settings %+v, generated %q", r.Settings, r.GeneratedAt)
	}
}

func TestEvaluateSurvivesBadEntries(t *testing.T) {
	entries := []journal.Entry{
		{ID: 2, ClientID: "c", At: "yesterday", Endpoint: endpointAPI, Method: http.MethodGet, Status: http.StatusUnauthorized, TokenExpiresAt: "soon"},
		{ID: 1, ClientID: "c", Endpoint: endpointPing, Status: http.StatusTooManyRequests, RetryAfterSeconds: 5, Query: "%zz"},
		{ID: 3, ClientID: "c", Endpoint: endpointToken, Method: http.MethodPost},
	}
	cr := onlyClient(t, Evaluate(entries, Options{}))
	if c := checkByID(t, cr, CheckNoCredentialsInURL); c.Result != Fail {
		t.Errorf("unreadable query: %s, want fail", c.Result)
	}
	if c := checkByID(t, cr, CheckHonoursRetryAfter); c.Result != NotExercised {
		t.Errorf("untimed Retry-After: %s, want not-exercised", c.Result)
	}
}

// TestReportJSONShape pins the field names the admin API and the CLI use.
func TestReportJSONShape(t *testing.T) {
	entries, _ := script("", 5*time.Millisecond)
	data, err := json.Marshal(Evaluate(entries, Options{Now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"generatedAt":"2026-03-01T12:00:00.000000Z"`, `"settings":{"tls":false,"pingsPerMinute":6,"renewalMarginSeconds":60,"maxAttempts":8}`,
		`"clients":[{"clientId":"partner","program":{"label":"partner-client/1.0","userAgent":"partner-client/1.0","connections":1},"requests":`, `"result":"pass","summary":{`, `"not-exercised":1`,
		`{"id":"expired-token","title":`, `"evidence":[]`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("JSON lacks %s:\n%s", want, data)
		}
	}
}

func TestEvidenceIsCapped(t *testing.T) {
	s := newSim()
	s.fetchToken()
	for range MaxEvidence + 5 {
		s.call(bodyBytes(3))
	}
	c := single(t, s, CheckContentTypes, Options{})
	if len(c.Evidence) != MaxEvidence || !strings.Contains(c.Explanation, "first 20 of 25") {
		t.Errorf("evidence %d ids, explanation %q", len(c.Evidence), c.Explanation)
	}
}
