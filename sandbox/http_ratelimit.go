package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/failures"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// Rate limiting defaults: generous enough that a test suite never meets
// them, so a 429 only happens when a test asks for one.
const (
	DefaultRateLimit = 1000.0
	DefaultRateBurst = 2000
)

// The unverified bucket: every request whose token the sandbox did not
// issue shares it, so forged tokens neither spend a client's quota nor add a
// bucket each. It is small (at most these, and never more than the
// sandbox-wide setting) because no well-behaved client lands in it.
const (
	UnverifiedRateLimit = 50.0
	UnverifiedRateBurst = 100
)

// unverifiedBucket keys the shared unverified bucket; no client id is empty.
const unverifiedBucket = ""

// rateLimiter limits each registered client's requests on its clock, with
// the client's own limit and burst when it has them, plus the shared
// unverified bucket: at most len(clients)+1 buckets. The algorithm and its
// two stores, this process's memory or Redis for every replica, are
// package ratelimit.
type rateLimiter struct {
	provider *idp.Provider
	limit    float64
	burst    int
	buckets  *ratelimit.Buckets
}

func newRateLimiter(provider *idp.Provider, limit float64, burst int, store ratelimit.Store) *rateLimiter {
	return &rateLimiter{provider: provider, limit: limit, burst: burst, buckets: ratelimit.New(store)}
}

// limits is the bucket of clientID (the unverified one for any id that is
// not a registered client) with its rate and burst; on is false when
// limiting is off for it.
func (l *rateLimiter) limits(clientID string) (key string, lim ratelimit.Limit, on bool) {
	c, registered := l.provider.Client(clientID)
	if !registered {
		rate, burst := min(l.limit, UnverifiedRateLimit), min(l.burst, UnverifiedRateBurst)
		return unverifiedBucket, ratelimit.Limit{Rate: rate, Burst: max(burst, 1)}, rate > 0
	}
	rate, burst := l.limit, l.burst
	if c.RateLimit != nil {
		rate = *c.RateLimit
	}
	if c.RateBurst != nil {
		burst = *c.RateBurst
	}
	return clientID, ratelimit.Limit{Rate: rate, Burst: max(burst, 1)}, rate > 0
}

// forget drops one client's bucket: a reset client starts full. A failure
// is the shared state's (503): the memory store never fails.
func (l *rateLimiter) forget(ctx context.Context, clientID string) error {
	if err := l.buckets.Forget(ctx, clientID); err != nil {
		return backend.Unavailable("forget the rate limit of "+clientID, err)
	}
	return nil
}

// reset refills every bucket.
func (l *rateLimiter) reset(ctx context.Context) error {
	if err := l.buckets.Reset(ctx); err != nil {
		return backend.Unavailable("refill the rate limits", err)
	}
	return nil
}

// withRateLimit answers 429 with Retry-After when a client's bucket is empty,
// and tells every API and ping response how much is left (RateLimit-*).
// Requests with a token the sandbox did not issue share the unverified
// bucket; requests with no credential at all go on to authentication's 401.
func (s *Server) withRateLimit(next exchange.HandlerFunc) exchange.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c exchange.Caller) exchange.Outcome {
		if c.Endpoint != scenarios.EndpointAPI && c.Endpoint != scenarios.EndpointPing || c.ClientID() == "" && !c.Unverified {
			return next(w, r, c)
		}
		id := c.ClientID()
		key, lim, on := s.limiter.limits(id)
		if !on {
			return next(w, r, c)
		}
		res, err := s.limiter.buckets.Take(r.Context(), key, lim, s.clocks.Now(id))
		if err != nil {
			s.log.Error("rate limit unavailable", "request_id", reply.RequestID(r), "err", err)
			s.reply.Unavailable(w, r, err)
			return exchange.Outcome{}
		}
		if !res.Allowed {
			seconds := failures.RetryAfterSeconds(res.RetryAfter)
			w.Header().Set("Retry-After", strconv.Itoa(seconds))
			setRateLimitHeaders(w, lim.Burst, 0, seconds)
			s.reply.Problem(w, r, reply.New(http.StatusTooManyRequests,
				fmt.Sprintf("rate limit of %g requests per second (burst %d) exceeded for %s; retry after %d second(s)", lim.Rate, lim.Burst, limitedWho(c), seconds)))
			return exchange.Outcome{}
		}
		setRateLimitHeaders(w, lim.Burst, res.Remaining(), res.SecondsUntilFull(lim))
		return next(w, r, c)
	}
}

// limitedWho names whose bucket ran out, for the 429 detail.
func limitedWho(c exchange.Caller) string {
	if c.ClientID() == "" {
		return "requests with tokens the sandbox did not issue (they share one bucket)"
	}
	return "client " + c.ClientID()
}

// setRateLimitHeaders writes the RateLimit-* headers of the IETF
// draft-ietf-httpapi-ratelimit-headers: quota, what is left, seconds to reset.
func setRateLimitHeaders(w http.ResponseWriter, limit, remaining, reset int) {
	h := w.Header()
	h[rateLimitLimit] = []string{strconv.Itoa(limit)}
	h[rateLimitRemaining] = []string{strconv.Itoa(remaining)}
	h[rateLimitReset] = []string{strconv.Itoa(reset)}
}

// The RateLimit-* headers' names as net/http keeps them (canonical form,
// as Header.Set would store them), so that writing and reading them
// allocates no canonical copy of the name.
const (
	rateLimitLimit     = "Ratelimit-Limit"
	rateLimitRemaining = "Ratelimit-Remaining"
	rateLimitReset     = "Ratelimit-Reset"
)

// ForcedHeaders gives a forced answer the RateLimit-* headers a real answer
// of the client would carry, read from its bucket without spending from it
// (the request never reached the service). A forced 429 (retryAfter > 0)
// says nothing is left until Retry-After, as a real 429 does. Nothing is
// written when limiting is off for the client or no client is known, as
// real answers then carry no RateLimit-* headers either.
func (l *rateLimiter) ForcedHeaders(ctx context.Context, w http.ResponseWriter, clientID string, now time.Time, retryAfter int) {
	if clientID == "" {
		return
	}
	key, lim, on := l.limits(clientID)
	if !on {
		return
	}
	if retryAfter > 0 {
		setRateLimitHeaders(w, lim.Burst, 0, retryAfter)
		return
	}
	res, err := l.buckets.Peek(ctx, key, lim, now)
	if err != nil {
		return // the forced answer goes out without the headers
	}
	setRateLimitHeaders(w, lim.Burst, res.Remaining(), res.SecondsUntilFull(lim))
}
