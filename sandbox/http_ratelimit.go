package sandbox

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

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

// rateLimiter keeps one token bucket per registered client on the sandbox
// clock, plus the shared unverified one: at most len(clients)+1 buckets.
type rateLimiter struct {
	provider *idp.Provider
	limit    float64
	burst    int

	mu         sync.Mutex
	buckets    map[string]*rate.Limiter
	unverified *rate.Limiter
	// unverifiedMade says unverified was built (it stays nil when off).
	unverifiedMade bool
}

func newRateLimiter(provider *idp.Provider, limit float64, burst int) *rateLimiter {
	return &rateLimiter{provider: provider, limit: limit, burst: burst, buckets: map[string]*rate.Limiter{}}
}

// bucket returns the limiter of a registered client, or the shared
// unverified one for any other id; nil when limiting is off for it.
func (l *rateLimiter) bucket(clientID string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, registered := l.provider.Client(clientID)
	if !registered {
		if !l.unverifiedMade {
			l.unverified = newBucket(min(l.limit, UnverifiedRateLimit), min(l.burst, UnverifiedRateBurst))
			l.unverifiedMade = true
		}
		return l.unverified
	}
	if b, ok := l.buckets[clientID]; ok {
		return b
	}
	limit, burst := l.limit, l.burst
	if c.RateLimit != nil {
		limit = *c.RateLimit
	}
	if c.RateBurst != nil {
		burst = *c.RateBurst
	}
	b := newBucket(limit, burst)
	l.buckets[clientID] = b
	return b
}

// forget drops one client's bucket: a reset client starts full.
func (l *rateLimiter) forget(clientID string) {
	l.mu.Lock()
	delete(l.buckets, clientID)
	l.mu.Unlock()
}

// newBucket is a token bucket, nil when limit turns limiting off.
func newBucket(limit float64, burst int) *rate.Limiter {
	if limit <= 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(limit), max(burst, 1))
}

// size is how many buckets exist, the unverified one included.
func (l *rateLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.buckets)
	if l.unverifiedMade {
		n++
	}
	return n
}

// reset refills every bucket.
func (l *rateLimiter) reset() {
	l.mu.Lock()
	clear(l.buckets)
	l.unverified, l.unverifiedMade = nil, false
	l.mu.Unlock()
}

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
		b := s.limiter.bucket(info.claimed.ClientID)
		if b == nil {
			next.ServeHTTP(w, r)
			return
		}
		now := s.now(info.claimed.ClientID)
		res := b.ReserveN(now, 1)
		wait := res.DelayFrom(now)
		if !res.OK() || wait > 0 {
			res.CancelAt(now)
			seconds := retryAfterSeconds(wait)
			w.Header().Set("Retry-After", strconv.Itoa(seconds))
			setRateLimitHeaders(w, b.Burst(), 0, seconds)
			s.problem(w, r, newProblem(http.StatusTooManyRequests,
				fmt.Sprintf("rate limit of %g requests per second (burst %d) exceeded for %s; retry after %d second(s)", float64(b.Limit()), b.Burst(), limitedWho(info), seconds)))
			return
		}
		remaining := int(math.Floor(b.TokensAt(now)))
		setRateLimitHeaders(w, b.Burst(), max(remaining, 0), secondsUntilFull(b, now))
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

// secondsUntilFull is how long until the bucket is full again.
func secondsUntilFull(b *rate.Limiter, now time.Time) int {
	missing := float64(b.Burst()) - b.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	return int(math.Ceil(missing / float64(b.Limit())))
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
func (l *rateLimiter) forcedHeaders(w http.ResponseWriter, clientID string, now time.Time, retryAfter int) {
	if clientID == "" {
		return
	}
	b := l.bucket(clientID)
	if b == nil {
		return
	}
	if retryAfter > 0 {
		setRateLimitHeaders(w, b.Burst(), 0, retryAfter)
		return
	}
	remaining := int(math.Floor(b.TokensAt(now)))
	setRateLimitHeaders(w, b.Burst(), max(remaining, 0), secondsUntilFull(b, now))
}
