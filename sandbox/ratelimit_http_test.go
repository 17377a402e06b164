package sandbox_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// slowRate refills one request every 20 seconds: slow enough that real time
// passing during a test never refills a bucket, so only the sandbox clock
// does.
const slowRate = 0.05

// withRateLimit sets the sandbox-wide rate limit.
func withRateLimit(limit float64, burst int) sandboxOption {
	return func(c *sandboxConfig) { c.RateLimit, c.RateBurst = limit, burst }
}

// withClientOverride gives clientID its own rateLimit and rateBurst, as
// clients.json would.
func withClientOverride(t *testing.T, clientID string, limit *float64, burst *int) sandboxOption {
	return withClients("", func(clients []referrals.Client) []referrals.Client {
		for i := range clients {
			if clients[i].ClientID == clientID {
				clients[i].RateLimit, clients[i].RateBurst = limit, burst
			}
		}
		return clients
	})
}

// TestRateLimitBurstThen429 spends a burst of 3, meets the 429, and checks
// Retry-After by honouring it on the sandbox clock.
func TestRateLimitBurstThen429(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withRateLimit(slowRate, 3))
	tok, other := s.token(partner), s.token(partner2)
	for i, remaining := range []string{"2", "1", "0"} {
		r := s.do(request{path: trialsPath, token: tok})
		if r.Status != http.StatusOK {
			t.Fatalf("request %d of the burst: %d %s", i+1, r.Status, r.Body)
		}
		if r.Header.Get("RateLimit-Limit") != "3" || r.Header.Get("RateLimit-Remaining") != remaining {
			t.Errorf("request %d: RateLimit-Limit %q Remaining %q, want 3 and %s", i+1,
				r.Header.Get("RateLimit-Limit"), r.Header.Get("RateLimit-Remaining"), remaining)
		}
	}
	r := s.do(request{path: trialsPath, token: tok})
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("after the burst: %d %s, want 429", r.Status, r.Body)
	}
	p := r.problem(t)
	if p.Type != sandbox.ProblemTypeRateLimited || !strings.Contains(p.Detail, partner) {
		t.Errorf("problem %+v", p)
	}
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || retry < 1 || retry > 20 {
		t.Fatalf("Retry-After %q, want whole seconds in [1, 20] at %g/s", r.Header.Get("Retry-After"), slowRate)
	}
	if r.Header.Get("RateLimit-Limit") != "3" || r.Header.Get("RateLimit-Remaining") != "0" {
		t.Errorf("429: RateLimit-Limit %q Remaining %q, want 3 and 0", r.Header.Get("RateLimit-Limit"), r.Header.Get("RateLimit-Remaining"))
	}
	if r.Header.Get(sandbox.RuleHeader) != "" {
		t.Errorf("a real 429 names a rule: %q", r.Header.Get(sandbox.RuleHeader))
	}
	// The ping shares the bucket; the token endpoint is not limited.
	if r := s.do(request{path: pingPath, token: tok}); r.Status != http.StatusTooManyRequests {
		t.Errorf("ping with an empty bucket: %d, want 429", r.Status)
	}
	accessTokenOf(t, s.postToken(tokenForm(partner, partner+"-secret", apiScope), nil))
	// Another client has its own bucket.
	if r := s.do(request{path: trialsPath, token: other}); r.Status != http.StatusOK {
		t.Errorf("%s: %d, want 200", partner2, r.Status)
	}
	// The journal shows who was limited and for how long.
	entries := s.journal(queryOf("status", "429", "clientId", partner))
	if len(entries) != 2 || entries[0].RetryAfterSeconds != retry {
		t.Errorf("journal 429s %+v, want 2 with retryAfterSeconds %d", entries, retry)
	}
	// Waiting Retry-After on the sandbox clock is enough.
	s.advance(time.Duration(retry) * time.Second)
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
		t.Errorf("after waiting Retry-After %ds: %d %s", retry, r.Status, r.Body)
	}
	// A long wait refills the whole burst, no more.
	s.advance(10 * time.Minute)
	statuses := s.statusSequence(tok, 4)
	if !slices.Equal(statuses, []int{200, 200, 200, 429}) {
		t.Errorf("after a refill: %v, want 3×200 then 429", statuses)
	}
}

// TestRateLimitIgnoresUnidentifiedCallers: a request without a token is
// refused by authentication (401), never counted against anyone.
func TestRateLimitIgnoresUnidentifiedCallers(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withRateLimit(slowRate, 1))
	for range 3 {
		if r := s.do(request{path: trialsPath}); r.Status != http.StatusUnauthorized {
			t.Errorf("no token: %d, want 401", r.Status)
		}
	}
	if r := s.do(request{path: trialsPath, token: s.token(partner)}); r.Status != http.StatusOK {
		t.Errorf("first identified call: %d, want 200", r.Status)
	}
}

// TestRateLimitClientOverrides: clients.json's rateLimit and rateBurst beat
// the sandbox-wide setting, including rateLimit 0 (no limit for that client).
func TestRateLimitClientOverrides(t *testing.T) {
	t.Parallel()
	one, zero := 1, 0.0
	t.Run("burst", func(t *testing.T) {
		t.Parallel()
		s := newSandbox(t, withRateLimit(slowRate, 3), withClientOverride(t, partner2, nil, &one))
		tok2, tok1 := s.token(partner2), s.token(partner)
		if got := s.statusSequence(tok2, 2); !slices.Equal(got, []int{200, 429}) {
			t.Errorf("%s with rateBurst 1: %v, want 200 then 429", partner2, got)
		}
		r := s.do(request{path: trialsPath, token: tok2})
		if r.Header.Get("RateLimit-Limit") != "1" {
			t.Errorf("RateLimit-Limit %q, want the client's burst 1", r.Header.Get("RateLimit-Limit"))
		}
		if got := s.statusSequence(tok1, 4); !slices.Equal(got, []int{200, 200, 200, 429}) {
			t.Errorf("%s on the default burst 3: %v", partner, got)
		}
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		s := newSandbox(t, withRateLimit(slowRate, 1), withClientOverride(t, partner, &zero, nil))
		tok := s.token(partner)
		for i, st := range s.statusSequence(tok, 10) {
			if st != http.StatusOK {
				t.Fatalf("call %d of %s with rateLimit 0: %d, want 200", i, partner, st)
			}
		}
		if got := s.statusSequence(s.token(partner2), 2); !slices.Equal(got, []int{200, 429}) {
			t.Errorf("%s on the sandbox limit: %v, want 200 then 429", partner2, got)
		}
	})
}
