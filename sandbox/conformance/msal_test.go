package conformance

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// msalClient plays a cache-first MSAL client (Python, Node, Go): before
// each call it uses its cached token unless that has less than the
// libraries' 5-minute refresh margin left, in which case it fetches a new
// one. It makes calls calls, every gap.
func msalClient(s *sim, calls int, gap time.Duration) {
	for i := range calls {
		if s.token == "" || s.expiresAt().Sub(s.now) < idp.LibraryRefreshMargin {
			s.fetchToken()
		}
		s.call()
		if i < calls-1 {
			s.wait(gap)
		}
	}
}

// naiveClient fetches a token for every call.
func naiveClient(s *sim, calls int, gap time.Duration) {
	for i := range calls {
		s.fetchToken()
		s.call()
		if i < calls-1 {
			s.wait(gap)
		}
	}
}

// TestMSALClientPassesWithTheShortTokenPersona: a cache-first MSAL client
// of the short-token- persona, calling once a minute for ten minutes,
// renews its token before every call past the first minute (its tokens
// have 5 minutes left after one). That is renewal, and reuse: both pass.
// With 2-minute tokens every token it fetched was one per call, and the
// report failed reuses-tokens.
func TestMSALClientPassesWithTheShortTokenPersona(t *testing.T) {
	for _, gap := range []time.Duration{time.Minute, 20 * time.Second, time.Second} {
		t.Run(gap.String(), func(t *testing.T) {
			s := newSim()
			s.lifetime = idp.ShortTokenLifetime
			msalClient(s, 11, gap)
			cr := onlyClient(t, Evaluate(s.entries, testOptions()))
			for _, id := range []string{CheckExpiredToken, CheckReusesTokens, CheckRenewsBeforeExpiry} {
				c := checkByID(t, cr, id)
				want := Pass
				if id == CheckRenewsBeforeExpiry && gap == time.Second {
					want = NotExercised // ten seconds: no token came near its expiry
				}
				if c.Result != want {
					t.Errorf("%s: %s (%s) %v, want %s", id, c.Result, c.Explanation, c.Evidence, want)
				}
			}
		})
	}
}

// TestNaiveClientFailsReuseWithTheShortTokenPersona: a client that
// fetches a token per call fails reuses-tokens with the persona's tokens,
// which MSAL would have reused for a minute.
func TestNaiveClientFailsReuseWithTheShortTokenPersona(t *testing.T) {
	s := newSim()
	s.lifetime = idp.ShortTokenLifetime
	naiveClient(s, 11, 5*time.Second)
	c := single(t, s, CheckReusesTokens, testOptions())
	if c.Result != Fail || len(c.Evidence) != 11 {
		t.Errorf("reuses-tokens %s (%s) %v, want fail with 11 tokens", c.Result, c.Explanation, c.Evidence)
	}
}

// TestTokensInsideMSALMarginAreNotJudgedForReuse: with 2-minute tokens
// (a client's own tokenLifetimeSeconds), MSAL treats each token as expired
// from the start and fetches one per call. Reuse cannot be told from that,
// so it is not judged, and the explanation says how to make it judgeable.
func TestTokensInsideMSALMarginAreNotJudgedForReuse(t *testing.T) {
	s := newSim()
	s.lifetime = 2 * time.Minute
	msalClient(s, 11, time.Second)
	cr := onlyClient(t, Evaluate(s.entries, testOptions()))
	reuse := checkByID(t, cr, CheckReusesTokens)
	if reuse.Result != NotExercised || !strings.Contains(reuse.Explanation, idp.ShortTokenPrefix) {
		t.Errorf("reuses-tokens %s (%s), want not-exercised naming %s", reuse.Result, reuse.Explanation, idp.ShortTokenPrefix)
	}
	if cr.Result == Fail {
		t.Errorf("a correct MSAL client failed: %+v", cr.Checks)
	}
}

// TestRenewalHintWorksWhenFollowed: the hint of a client that never
// renewed names what exercises renewal (the short-token- persona), not a
// clock move: a moved clock makes the API refuse the token, which
// expired-token judges, and clock moves are taken out of renewal timing.
func TestRenewalHintWorksWhenFollowed(t *testing.T) {
	s := newSim()
	msalClient(s, 5, time.Second)
	c := single(t, s, CheckRenewsBeforeExpiry, testOptions())
	if c.Result != NotExercised || strings.Contains(c.Explanation, "clock") || !strings.Contains(c.Explanation, idp.ShortTokenPrefix) {
		t.Fatalf("renews-before-expiry %s (%s), want not-exercised naming %s and no clock move", c.Result, c.Explanation, idp.ShortTokenPrefix)
	}
	// Following it: the same client with the persona's tokens, for long
	// enough to pass the first minute.
	followed := newSim()
	followed.lifetime = idp.ShortTokenLifetime
	msalClient(followed, 5, 30*time.Second)
	if c := single(t, followed, CheckRenewsBeforeExpiry, testOptions()); c.Result != Pass {
		t.Errorf("hint followed: renews-before-expiry %s (%s)", c.Result, c.Explanation)
	}
}

// TestDiscoveryIsNotAProgram: the anonymous GETs MSAL makes before its
// first token (OpenID configuration, instance discovery, JWKS) are no
// program of anyone's: no "(unidentified)" client passes in the report.
func TestDiscoveryIsNotAProgram(t *testing.T) {
	s := newSim()
	for _, p := range []string{
		"/tenant/v2.0/.well-known/openid-configuration",
		"/common/discovery/instance",
		"/tenant/discovery/v2.0/keys",
	} {
		s.record(journal.Entry{Method: http.MethodGet, Path: p, Status: http.StatusOK}, client(""))
	}
	msalClient(s, 3, time.Second)
	r := Evaluate(s.entries, testOptions())
	for _, cr := range r.Clients {
		if cr.ClientID == Unidentified {
			t.Errorf("discovery judged as a program: %+v", cr)
		}
	}
	if cr := onlyClient(t, r); cr.ClientID != "partner" || cr.Requests != 4 {
		t.Errorf("client %s with %d requests, want partner with 4", cr.ClientID, cr.Requests)
	}
	// Other anonymous requests still are judged, one by one.
	s.record(journal.Entry{Method: http.MethodGet, Path: "/api/v1/referrals/trials", Endpoint: endpointAPI, Status: http.StatusUnauthorized}, client(""), plainHTTP())
	r = Evaluate(s.entries, testOptions())
	if len(r.Clients) != 2 || r.Clients[1].ClientID != Unidentified {
		t.Errorf("an anonymous API call is not reported: %+v", r.Clients)
	}
}

// TestEvidenceNamesEachRequestOnce: a client that calls twice more with a
// refused token shows the middle call both as the reaction to the first
// 401 and as a 401 itself; the evidence names it once.
func TestEvidenceNamesEachRequestOnce(t *testing.T) {
	s := newSim()
	s.fetchToken()
	a := s.call(status(http.StatusUnauthorized))
	s.wait(time.Second)
	b := s.call(status(http.StatusUnauthorized))
	s.wait(time.Second)
	c := s.call(status(http.StatusUnauthorized))
	got := single(t, s, CheckExpiredToken, testOptions())
	if want := []string{a, b, c}; got.Result != Fail || !reflect.DeepEqual(got.Evidence, want) {
		t.Errorf("expired-token %s %v, want fail %v", got.Result, got.Evidence, want)
	}
}

// TestStopsOn403 judges what a client does after a 403.
func TestStopsOn403(t *testing.T) {
	qualified := path(http.MethodGet, "/api/v1/referrals/qualified")
	tests := []struct {
		name string
		play func(s *sim) []string
		want Result
	}{
		{"no 403", func(s *sim) []string { s.call(); return nil }, NotExercised},
		{"stops and calls something else", func(s *sim) []string {
			s.call(qualified, status(http.StatusForbidden))
			s.wait(time.Second)
			s.call()
			s.call(path(http.MethodGet, "/api/v1/referrals/qualified"), query("limit=5"))
			return nil
		}, Pass},
		{"comes back to it after other calls", func(s *sim) []string {
			s.call(qualified, status(http.StatusForbidden))
			s.wait(time.Second)
			s.call()
			s.wait(time.Minute)
			s.call(qualified)
			return nil
		}, Pass},
		{"retries the same call", func(s *sim) []string {
			f := s.call(qualified, status(http.StatusForbidden))
			s.wait(time.Second)
			r1 := s.call(qualified, status(http.StatusForbidden))
			s.wait(2 * time.Second)
			r2 := s.call(qualified, status(http.StatusForbidden))
			return []string{f, r1, r2}
		}, Fail},
		{"a retry with a new token is still a retry", func(s *sim) []string {
			f := s.call(qualified, status(http.StatusForbidden))
			s.fetchToken()
			r := s.call(qualified, status(http.StatusForbidden))
			return []string{f, r}
		}, Fail},
		{"a call already in flight is no retry", func(s *sim) []string {
			s.answer = 50 * time.Millisecond
			f := s.call(qualified, status(http.StatusForbidden))
			// Journaled after the 403 but sent while it was being answered.
			s.now = s.now.Add(-40 * time.Millisecond)
			s.call(qualified, status(http.StatusForbidden), took(1))
			_ = f
			return nil
		}, Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSim()
			s.fetchToken()
			want := tt.play(s)
			c := single(t, s, CheckStopsOn403, testOptions())
			if c.Result != tt.want || (want != nil && !reflect.DeepEqual(c.Evidence, want)) {
				t.Errorf("stops-on-403 %s (%s) %v, want %s %v", c.Result, c.Explanation, c.Evidence, tt.want, want)
			}
		})
	}
}
