package sandbox

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// bucketStore keeps the clients' token buckets. take spends one token when
// there is one; peek only looks. Both judge the bucket at now, the client's
// sandbox time, so moving the clock refills buckets.
type bucketStore interface {
	take(ctx context.Context, clientID string, limit float64, burst int, now time.Time) (bucketState, error)
	peek(ctx context.Context, clientID string, limit float64, burst int, now time.Time) (bucketState, error)
	forget(ctx context.Context, clientID string) error
	reset(ctx context.Context) error
}

// bucketState is a bucket after a take or peek.
type bucketState struct {
	allowed bool
	tokens  float64
	// wait is how long until a refused request would be allowed.
	wait time.Duration
}

// remaining is the whole tokens left, for RateLimit-Remaining.
func (b bucketState) remaining() int { return max(int(math.Floor(b.tokens)), 0) }

// secondsUntilFull is how long until the bucket is full again.
func (b bucketState) secondsUntilFull(limit float64, burst int) int {
	missing := float64(burst) - b.tokens
	if missing <= 0 {
		return 0
	}
	return int(math.Ceil(missing / limit))
}

// memoryBuckets is the in-process bucketStore: one rate.Limiter per client,
// made with the client's limits on first use.
type memoryBuckets struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newMemoryBuckets() *memoryBuckets { return &memoryBuckets{buckets: map[string]*rate.Limiter{}} }

func (m *memoryBuckets) bucket(clientID string, limit float64, burst int) *rate.Limiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.buckets[clientID]
	if !ok {
		b = rate.NewLimiter(rate.Limit(limit), burst)
		m.buckets[clientID] = b
	}
	return b
}

func (m *memoryBuckets) take(_ context.Context, clientID string, limit float64, burst int, now time.Time) (bucketState, error) {
	b := m.bucket(clientID, limit, burst)
	res := b.ReserveN(now, 1)
	if wait := res.DelayFrom(now); !res.OK() || wait > 0 {
		res.CancelAt(now)
		return bucketState{wait: wait, tokens: b.TokensAt(now)}, nil
	}
	return bucketState{allowed: true, tokens: b.TokensAt(now)}, nil
}

func (m *memoryBuckets) peek(_ context.Context, clientID string, limit float64, burst int, now time.Time) (bucketState, error) {
	return bucketState{tokens: m.bucket(clientID, limit, burst).TokensAt(now)}, nil
}

func (m *memoryBuckets) forget(_ context.Context, clientID string) error {
	m.mu.Lock()
	delete(m.buckets, clientID)
	m.mu.Unlock()
	return nil
}

func (m *memoryBuckets) reset(context.Context) error {
	m.mu.Lock()
	clear(m.buckets)
	m.mu.Unlock()
	return nil
}
