// Package ratelimit is the sandbox's token buckets: one algorithm (this
// file) over two state stores: memory for a sandbox that runs alone
// (memory.go) and Redis for replicas that share one bucket per client
// (redis.go), where a take is one atomic script that does this file's
// arithmetic step for step. Both stores pass the same conformance suite
// (ratelimittest), so a limit, a burst, a sequence of clock moves and any
// number of concurrent callers give the same answers, to the bit, in
// either mode. It is not a stable API: only the sandbox uses it.
package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
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
// as golang.org/x/time/rate does. The Redis store's take script does the
// same arithmetic in the same order (redis.go); the explicit conversion
// keeps the compiler from fusing the multiply and the add into one
// rounding, which the script cannot do.
func at(st State, found bool, l Limit, now time.Time) State {
	if !found {
		return State{Tokens: float64(l.Burst), At: now}
	}
	if elapsed := now.Sub(st.At); elapsed > 0 {
		st.Tokens = math.Min(float64(l.Burst), st.Tokens+float64(elapsed.Seconds()*l.Rate))
	}
	st.At = now
	return st
}

// take is the algorithm: spend one token at now when there is one. A
// refused request spends nothing. changed is false when nothing need be
// stored: a refusal whose refill is judged the same later (the clock did
// not move back).
func take(st State, found bool, l Limit, now time.Time) (next State, d Decision, changed bool) {
	next = at(st, found, l, now)
	allowed := next.Tokens >= 1
	if allowed {
		next.Tokens--
	}
	return next, decide(allowed, next.Tokens, l), allowed || found && now.Before(st.At)
}

// decide is the answer to a take that left tokens: a refused one waits
// until one more token is there.
func decide(allowed bool, tokens float64, l Limit) Decision {
	if allowed {
		return Decision{Allowed: true, Tokens: tokens}
	}
	wait := time.Duration(math.Ceil((1 - tokens) / l.Rate * float64(time.Second)))
	return Decision{Tokens: tokens, RetryAfter: wait}
}

// Store keeps the buckets' states. Every method takes a context and
// reports the backend's failure: a bucket that cannot be read is never
// taken for a full one.
type Store interface {
	// Get returns key's state; found is false when it has none.
	Get(ctx context.Context, key string) (st State, found bool, err error)
	// Take judges key's bucket at now with limit l and spends one token
	// when it holds one, in one atomic step: takes from any number of
	// callers and replicas at once never contend, so a client under its
	// rate is never refused nor failed for being busy. An allowed take is
	// recorded under call: a call already recorded answers the decision
	// recorded then, changing nothing, so a call that the client library
	// retried (its first try may still run once the backend resumes)
	// takes effect once.
	Take(ctx context.Context, key, call string, l Limit, now time.Time) (Decision, error)
	// Forget drops key's bucket: it starts full.
	Forget(ctx context.Context, key string) error
	// Reset drops every bucket.
	Reset(ctx context.Context) error
}

// Buckets are token buckets over a Store.
type Buckets struct {
	store Store
}

// New returns buckets kept in store.
func New(store Store) *Buckets { return &Buckets{store: store} }

// Store is where the buckets live.
func (b *Buckets) Store() Store { return b.store }

// Take spends one token of key's bucket at now, when there is one: one
// atomic step of the store under a new call id.
func (b *Buckets) Take(ctx context.Context, key string, l Limit, now time.Time) (Decision, error) {
	call, err := newCallID()
	if err != nil {
		return Decision{}, err
	}
	d, err := b.store.Take(ctx, key, call, l, now)
	if err != nil {
		return Decision{}, fmt.Errorf("spend from rate limit bucket %s: %w", key, err)
	}
	return d, nil
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
	if err := b.store.Forget(ctx, key); err != nil {
		return fmt.Errorf("drop rate limit bucket %s: %w", key, err)
	}
	return nil
}

// Reset refills every bucket.
func (b *Buckets) Reset(ctx context.Context) error {
	if err := b.store.Reset(ctx); err != nil {
		return fmt.Errorf("refill the rate limit buckets: %w", err)
	}
	return nil
}

// newCallID names one Take, so that a store recognises a retried one.
func newCallID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("rate limit call id: %w", err)
	}
	return hex.EncodeToString(b), nil
}
