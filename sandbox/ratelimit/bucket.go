// Package ratelimit is the sandbox's token buckets: one algorithm (this
// file), written once, over two state stores: memory for a sandbox that runs
// alone (memory.go) and Redis for replicas that share one bucket per client
// (redis.go). Both stores pass the same conformance suite (ratelimittest),
// so a limit, a burst and a sequence of clock moves give the same answers in
// either mode. It is not a stable API: only the sandbox uses it.
package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// Limit is a bucket's refill rate (tokens per second) and size.
type Limit struct {
	Rate  float64
	Burst int
}

// State is a bucket as its store keeps it: the tokens it held at At, a time
// on the sandbox clock. A bucket with no state is full.
type State struct {
	Tokens float64
	At     time.Time
}

// Decision is the answer to a request: allowed or not, the tokens left and,
// when refused, how long until one more token is there.
type Decision struct {
	Allowed    bool
	Tokens     float64
	RetryAfter time.Duration
}

// Remaining is the whole tokens left, for RateLimit-Remaining.
func (d Decision) Remaining() int { return max(int(math.Floor(d.Tokens)), 0) }

// SecondsUntilFull is how long until the bucket is full again, for
// RateLimit-Reset.
func (d Decision) SecondsUntilFull(l Limit) int {
	missing := float64(l.Burst) - d.Tokens
	if missing <= 0 {
		return 0
	}
	return int(math.Ceil(missing / l.Rate))
}

// at is the bucket judged at now. Time since the last change refills it, up
// to the burst. A clock moved back refills nothing and makes now the
// bucket's time, so that moving it forward again refills only from there,
// as golang.org/x/time/rate does.
func at(st State, found bool, l Limit, now time.Time) State {
	if !found {
		return State{Tokens: float64(l.Burst), At: now}
	}
	if elapsed := now.Sub(st.At); elapsed > 0 {
		st.Tokens = math.Min(float64(l.Burst), st.Tokens+elapsed.Seconds()*l.Rate)
	}
	st.At = now
	return st
}

// take is the algorithm: spend one token at now when there is one. A
// refused request spends nothing.
func take(st State, found bool, l Limit, now time.Time) (State, Decision) {
	next := at(st, found, l, now)
	if next.Tokens >= 1 {
		next.Tokens--
		return next, Decision{Allowed: true, Tokens: next.Tokens}
	}
	wait := time.Duration(math.Ceil((1 - next.Tokens) / l.Rate * float64(time.Second)))
	return next, Decision{Tokens: next.Tokens, RetryAfter: wait}
}

// Store keeps the buckets' states. Every method takes a context and
// reports the backend's failure: a bucket that cannot be read is never
// taken for a full one.
type Store interface {
	// Get returns key's state; found is false when it has none.
	Get(ctx context.Context, key string) (st State, found bool, err error)
	// Swap stores next as key's state if the stored state is still old
	// (absent when found is false), and records d under call. A call
	// already recorded answers the decision recorded then, changing
	// nothing, so a call that the client library retried (its first try
	// may still run once the backend resumes) takes effect once. When the
	// state changed in between, Swapped is false and Current is the state
	// now stored: the caller judges again without another read.
	Swap(ctx context.Context, key, call string, old State, found bool, next State, d Decision) (Swapped, error)
	// Forget drops key's bucket: it starts full.
	Forget(ctx context.Context, key string) error
	// Reset drops every bucket.
	Reset(ctx context.Context) error
}

// Swapped is what a Swap did.
type Swapped struct {
	// OK is true when next was stored, or the call had been made before.
	OK bool
	// Decision is the call's decision, when OK.
	Decision Decision
	// Current and Found are the state stored, when not OK.
	Current State
	Found   bool
}

// ErrContended: a bucket kept changing under maxAttempts judgements in a
// row; the request may be retried.
var ErrContended = errors.New("rate limit bucket contended")

// maxAttempts bounds how often a Take judges again a bucket that changed.
const maxAttempts = 64

// Buckets are token buckets over a Store. They remember the state each of
// their own Takes stored, and try the next Take's swap from it: on a busy
// replica that is one round trip to Redis per request. A swap from a
// state another replica has changed fails and answers the current state.
type Buckets struct {
	store Store

	mu   sync.Mutex
	last map[string]State // key's state as this process last stored it
}

// maxRemembered bounds Buckets.last; past it, it is emptied (each bucket
// then costs one more round trip once).
const maxRemembered = 10000

// New returns buckets kept in store.
func New(store Store) *Buckets { return &Buckets{store: store, last: map[string]State{}} }

func (b *Buckets) remembered(key string) (State, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.last[key]
	return st, ok
}

func (b *Buckets) remember(key string, st State, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !ok {
		delete(b.last, key)
		return
	}
	if len(b.last) >= maxRemembered {
		clear(b.last)
	}
	b.last[key] = st
}

// Store is where the buckets live.
func (b *Buckets) Store() Store { return b.store }

// Take spends one token of key's bucket at now, when there is one.
func (b *Buckets) Take(ctx context.Context, key string, l Limit, now time.Time) (Decision, error) {
	call, err := newCallID()
	if err != nil {
		return Decision{}, err
	}
	// A state remembered may be stale (another replica spent or refilled
	// the bucket): a swap from it fails, and a refusal is checked against
	// the store before it is answered.
	st, found := b.remembered(key)
	fresh := false
	for range maxAttempts {
		next, d := take(st, found, l, now)
		if !d.Allowed && !now.Before(st.At) {
			// Refused, and the refill since st.At is judged the same later:
			// nothing to store.
			if fresh {
				return d, nil
			}
			if st, found, err = b.store.Get(ctx, key); err != nil {
				return Decision{}, fmt.Errorf("read rate limit bucket %s: %w", key, err)
			}
			fresh = true
			continue
		}
		res, err := b.store.Swap(ctx, key, call, st, found, next, d)
		if err != nil {
			b.remember(key, State{}, false)
			return Decision{}, fmt.Errorf("spend from rate limit bucket %s: %w", key, err)
		}
		if res.OK {
			b.remember(key, next, true)
			return res.Decision, nil
		}
		st, found, fresh = res.Current, res.Found, true
	}
	b.remember(key, State{}, false)
	return Decision{}, fmt.Errorf("%s: %w", key, ErrContended)
}

// Peek is what Take would answer about key's tokens at now, spending nothing.
func (b *Buckets) Peek(ctx context.Context, key string, l Limit, now time.Time) (Decision, error) {
	st, found, err := b.store.Get(ctx, key)
	if err != nil {
		return Decision{}, fmt.Errorf("read rate limit bucket %s: %w", key, err)
	}
	return Decision{Tokens: at(st, found, l, now).Tokens}, nil
}

// Forget drops key's bucket: it starts full.
func (b *Buckets) Forget(ctx context.Context, key string) error {
	b.remember(key, State{}, false)
	if err := b.store.Forget(ctx, key); err != nil {
		return fmt.Errorf("drop rate limit bucket %s: %w", key, err)
	}
	return nil
}

// Reset refills every bucket.
func (b *Buckets) Reset(ctx context.Context) error {
	b.mu.Lock()
	clear(b.last)
	b.mu.Unlock()
	if err := b.store.Reset(ctx); err != nil {
		return fmt.Errorf("refill the rate limit buckets: %w", err)
	}
	return nil
}

// newCallID names one Take, so that a store recognises a retried Swap.
func newCallID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("rate limit call id: %w", err)
	}
	return hex.EncodeToString(b), nil
}
