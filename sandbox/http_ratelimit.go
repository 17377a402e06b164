package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
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
// unverified bucket: at most len(clients)+1 buckets. The buckets live in
// this process (memoryBuckets) or in Redis for every replica
// (sharedBuckets).
type rateLimiter struct {
	provider *idp.Provider
	limit    float64
	burst    int
	buckets  bucketStore
}

func newRateLimiter(provider *idp.Provider, limit float64, burst int, buckets bucketStore) *rateLimiter {
	return &rateLimiter{provider: provider, limit: limit, burst: burst, buckets: buckets}
}

// limits is the bucket of clientID (the unverified one for any id that is
// not a registered client) with its rate and burst; on is false when
// limiting is off for it.
func (l *rateLimiter) limits(clientID string) (key string, limit float64, burst int, on bool) {
	c, registered := l.provider.Client(clientID)
	if !registered {
		limit, burst = min(l.limit, UnverifiedRateLimit), min(l.burst, UnverifiedRateBurst)
		return unverifiedBucket, limit, max(burst, 1), limit > 0
	}
	limit, burst = l.limit, l.burst
	if c.RateLimit != nil {
		limit = *c.RateLimit
	}
	if c.RateBurst != nil {
		burst = *c.RateBurst
	}
	return clientID, limit, max(burst, 1), limit > 0
}

// forget drops one client's bucket: a reset client starts full.
func (l *rateLimiter) forget(ctx context.Context, clientID string) error {
	return l.buckets.forget(ctx, clientID)
}

// reset refills every bucket.
func (l *rateLimiter) reset(ctx context.Context) error { return l.buckets.reset(ctx) }

// withRateLimit answers 429 with Retry-After when a client's bucket is empty,
// and tells every API and ping response how much is left (RateLimit-*).
// Requests with a token the sandbox did not issue share the unverified
// bucket; requests with no credential at all go on to authentication's 401.
func (s *Server) withRateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		if info.endpoint != "api" && info.endpoint != "ping" || info.claimed.ClientID == "" && !info.unverified {
			next.ServeHTTP(w, r)
			return
		}
		id := info.claimed.ClientID
		key, limit, burst, on := s.limiter.limits(id)
		if !on {
			next.ServeHTTP(w, r)
			return
		}
		res, err := s.limiter.buckets.take(r.Context(), key, limit, burst, s.now(id))
		if err != nil {
			s.log.Error("rate limit unavailable", "request_id", requestID(r), "err", err)
			s.unavailable(w, r)
			return
		}
		if !res.allowed {
			seconds := retryAfterSeconds(res.wait)
			w.Header().Set("Retry-After", strconv.Itoa(seconds))
			setRateLimitHeaders(w, burst, 0, seconds)
			s.problem(w, r, newProblem(http.StatusTooManyRequests,
				fmt.Sprintf("rate limit of %g requests per second (burst %d) exceeded for %s; retry after %d second(s)", limit, burst, limitedWho(info), seconds)))
			return
		}
		setRateLimitHeaders(w, burst, res.remaining(), res.secondsUntilFull(limit, burst))
		next.ServeHTTP(w, r)
	})
}

// limitedWho names whose bucket ran out, for the 429 detail.
func limitedWho(info *requestInfo) string {
	if info.claimed.ClientID == "" {
		return "requests with tokens the sandbox did not issue (they share one bucket)"
	}
	return "client " + info.claimed.ClientID
}

// setRateLimitHeaders writes the RateLimit-* headers of the IETF
// draft-ietf-httpapi-ratelimit-headers: quota, what is left, seconds to reset.
func setRateLimitHeaders(w http.ResponseWriter, limit, remaining, reset int) {
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(reset))
}

// forcedHeaders gives a forced answer the RateLimit-* headers a real answer
// of the client would carry, read from its bucket without spending from it
// (the request never reached the service). A forced 429 (retryAfter > 0)
// says nothing is left until Retry-After, as a real 429 does. Nothing is
// written when limiting is off for the client or no client is known, as
// real answers then carry no RateLimit-* headers either.
func (l *rateLimiter) forcedHeaders(ctx context.Context, w http.ResponseWriter, clientID string, now time.Time, retryAfter int) {
	if clientID == "" {
		return
	}
	key, limit, burst, on := l.limits(clientID)
	if !on {
		return
	}
	if retryAfter > 0 {
		setRateLimitHeaders(w, burst, 0, retryAfter)
		return
	}
	res, err := l.buckets.peek(ctx, key, limit, burst, now)
	if err != nil {
		return // the forced answer goes out without the headers
	}
	setRateLimitHeaders(w, burst, res.remaining(), res.secondsUntilFull(limit, burst))
}
