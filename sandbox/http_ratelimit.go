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

// rateLimiter keeps one token bucket per client on the sandbox clock.
type rateLimiter struct {
	provider *idp.Provider
	limit    float64
	burst    int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newRateLimiter(provider *idp.Provider, limit float64, burst int) *rateLimiter {
	return &rateLimiter{provider: provider, limit: limit, burst: burst, buckets: map[string]*rate.Limiter{}}
}

// bucket returns the client's limiter, nil when limiting is off for it.
func (l *rateLimiter) bucket(clientID string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[clientID]; ok {
		return b
	}
	limit, burst := l.limit, l.burst
	if c, ok := l.provider.Client(clientID); ok {
		if c.RateLimit != nil {
			limit = *c.RateLimit
		}
		if c.RateBurst != nil {
			burst = *c.RateBurst
		}
	}
	var b *rate.Limiter
	if limit > 0 {
		b = rate.NewLimiter(rate.Limit(limit), max(burst, 1))
	}
	l.buckets[clientID] = b
	return b
}

// forget drops one client's bucket: a reset client starts full.
func (l *rateLimiter) forget(clientID string) {
	l.mu.Lock()
	delete(l.buckets, clientID)
	l.mu.Unlock()
}

// reset refills every bucket.
func (l *rateLimiter) reset() {
	l.mu.Lock()
	clear(l.buckets)
	l.mu.Unlock()
}

// withRateLimit answers 429 with Retry-After when a client's bucket is empty,
// and tells every API and ping response how much is left (RateLimit-*).
// Requests without an identifiable client go on to authentication's 401.
func (s *Server) withRateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		if info.endpoint != "api" && info.endpoint != "ping" || info.claimed.ClientID == "" {
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
				fmt.Sprintf("rate limit of %g requests per second (burst %d) exceeded for client %s; retry after %d second(s)", float64(b.Limit()), b.Burst(), info.claimed.ClientID, seconds)))
			return
		}
		remaining := int(math.Floor(b.TokensAt(now)))
		setRateLimitHeaders(w, b.Burst(), max(remaining, 0), secondsUntilFull(b, now))
		next.ServeHTTP(w, r)
	})
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
