// Package ratelimittest is the conformance suite of ratelimit.Store: every
// store runs it, so that the same limit, burst and clock moves give the
// same allowed, remaining and retry-after whatever keeps the buckets. It is
// not a stable API.
package ratelimittest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
)

// Run runs the suite; open returns an empty store for one subtest.
func Run(t *testing.T, open func(t *testing.T) ratelimit.Store) {
	t.Run("ClockMoves", func(t *testing.T) { testClockMoves(t, open(t)) })
	t.Run("ForgetAndReset", func(t *testing.T) { testForgetAndReset(t, open(t)) })
	t.Run("RetriedCallTakesEffectOnce", func(t *testing.T) { testRetriedCall(t, open(t)) })
	t.Run("StaleSwapRefused", func(t *testing.T) { testStaleSwap(t, open(t)) })
	t.Run("ConcurrentTakes", func(t *testing.T) { testConcurrentTakes(t, open(t)) })
	t.Run("TwoReplicas", func(t *testing.T) { testTwoReplicas(t, open(t)) })
}

// testTwoReplicas: two Buckets over one store, as two replicas over one
// Redis, spend one bucket; what one remembers never outvotes the store.
func testTwoReplicas(t *testing.T, st ratelimit.Store) {
	a, b := ratelimit.New(st), ratelimit.New(st)
	l := ratelimit.Limit{Rate: 0.001, Burst: 4}
	spend(t, a, "k", l, 2)
	spend(t, b, "k", l, 2)
	for _, r := range []*ratelimit.Buckets{a, b} {
		if d, _ := r.Take(context.Background(), "k", l, t0); d.Allowed {
			t.Fatal("a fifth token of a burst of 4")
		}
	}
	if err := b.Reset(context.Background()); err != nil { // a remembers an empty bucket
		t.Fatal(err)
	}
	spend(t, a, "k", l, 4)
}

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// step is one request of a sequence: at t0+offset, what the bucket answers.
type step struct {
	offset     time.Duration
	allowed    bool
	remaining  int
	retryAfter time.Duration
}

// testClockMoves pins the algorithm: a burst, refusals with the exact wait,
// a refill by moving the clock forward, and a clock moved back, which
// refills nothing and refills from its new time only.
func testClockMoves(t *testing.T, st ratelimit.Store) {
	b := ratelimit.New(st)
	l := ratelimit.Limit{Rate: 2, Burst: 3}
	steps := []step{
		{0, true, 2, 0},
		{0, true, 1, 0},
		{0, true, 0, 0},
		{0, false, 0, 500 * time.Millisecond},
		{250 * time.Millisecond, false, 0, 250 * time.Millisecond},
		{500 * time.Millisecond, true, 0, 0},                         // one token refilled
		{-time.Hour, false, 0, 500 * time.Millisecond},               // back: nothing refilled
		{-time.Hour + time.Second, true, 1, 0},                       // refills from the new time: 2 tokens, one spent
		{-time.Hour + time.Second, true, 0, 0},                       //
		{time.Hour, true, 2, 0},                                      // forward far: full (3), one spent
		{time.Hour - time.Minute, true, 1, 0},                        // back a minute: nothing refilled
		{time.Hour - time.Minute + 100*time.Millisecond, true, 0, 0}, // 0.2 refilled: 1.2 -> 0.2
		{time.Hour - time.Minute + 100*time.Millisecond, false, 0, 400 * time.Millisecond},
	}
	for i, s := range steps {
		d, err := b.Take(context.Background(), "alpha", l, t0.Add(s.offset))
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if d.Allowed != s.allowed || d.Remaining() != s.remaining || d.RetryAfter != s.retryAfter {
			t.Fatalf("step %d at %v: allowed %v remaining %d retry after %v (tokens %g), want %v %d %v",
				i, s.offset, d.Allowed, d.Remaining(), d.RetryAfter, d.Tokens, s.allowed, s.remaining, s.retryAfter)
		}
	}
	peek, err := b.Peek(context.Background(), "alpha", l, t0.Add(time.Hour-time.Minute+600*time.Millisecond))
	if err != nil || peek.Remaining() != 1 || peek.SecondsUntilFull(l) != 1 {
		t.Errorf("peek: %+v %v, want 1 remaining, full in 1s", peek, err)
	}
	if d, _ := b.Take(context.Background(), "beta", l, t0); !d.Allowed || d.Remaining() != 2 {
		t.Errorf("another bucket: %+v, want its own full burst", d)
	}
}

func spend(t *testing.T, b *ratelimit.Buckets, key string, l ratelimit.Limit, n int) {
	t.Helper()
	for i := range n {
		if d, err := b.Take(context.Background(), key, l, t0); err != nil || !d.Allowed {
			t.Fatalf("take %d of %s: %+v %v", i, key, d, err)
		}
	}
}

func testForgetAndReset(t *testing.T, st ratelimit.Store) {
	b := ratelimit.New(st)
	l := ratelimit.Limit{Rate: 0.001, Burst: 2}
	spend(t, b, "a", l, 2)
	spend(t, b, "b", l, 2)
	if err := b.Forget(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	spend(t, b, "a", l, 2) // full again
	if d, _ := b.Take(context.Background(), "b", l, t0); d.Allowed {
		t.Fatal("forgetting a refilled b")
	}
	if err := b.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	spend(t, b, "a", l, 2)
	spend(t, b, "b", l, 2)
}

// testRetriedCall replays a Swap as a client library's retry would: the
// second try answers the first decision and spends nothing more.
func testRetriedCall(t *testing.T, st ratelimit.Store) {
	ctx := context.Background()
	next := ratelimit.State{Tokens: 4, At: t0}
	d := ratelimit.Decision{Allowed: true, Tokens: 4}
	for try := range 2 {
		res, err := st.Swap(ctx, "k", "call-1", ratelimit.State{}, false, next, d)
		if err != nil || !res.OK || res.Decision != d {
			t.Fatalf("try %d: %+v %v, want the decision made", try, res, err)
		}
	}
	// A retry arriving after another call changed the bucket still answers
	// the first decision, and leaves the other call's state alone.
	later := ratelimit.State{Tokens: 3, At: t0}
	if res, err := st.Swap(ctx, "k", "call-2", next, true, later, ratelimit.Decision{Allowed: true, Tokens: 3}); err != nil || !res.OK {
		t.Fatalf("second call: %+v %v", res, err)
	}
	if res, err := st.Swap(ctx, "k", "call-1", ratelimit.State{}, false, next, d); err != nil || !res.OK || res.Decision != d {
		t.Fatalf("late retry: %+v %v", res, err)
	}
	cur, found, err := st.Get(ctx, "k")
	if err != nil || !found || cur.Tokens != 3 || !cur.At.Equal(t0) {
		t.Errorf("bucket after a late retry: %+v %v %v, want 3 tokens", cur, found, err)
	}
}

func testStaleSwap(t *testing.T, st ratelimit.Store) {
	ctx := context.Background()
	a := ratelimit.State{Tokens: 1.5, At: t0}
	if res, err := st.Swap(ctx, "k", "c1", ratelimit.State{}, false, a, ratelimit.Decision{Allowed: true}); err != nil || !res.OK {
		t.Fatalf("first swap: %+v %v", res, err)
	}
	// A refused swap answers the state stored, exactly.
	stale := func(what string, res ratelimit.Swapped, err error) {
		t.Helper()
		if err != nil || res.OK || !res.Found || res.Current.Tokens != 1.5 || !res.Current.At.Equal(t0) {
			t.Fatalf("%s: %+v %v, want refused with the state stored", what, res, err)
		}
	}
	res, err := st.Swap(ctx, "k", "c2", ratelimit.State{}, false, a, ratelimit.Decision{Allowed: true})
	stale("swap over a bucket believed absent", res, err)
	res, err = st.Swap(ctx, "k", "c3", ratelimit.State{Tokens: 2, At: t0}, true, a, ratelimit.Decision{})
	stale("swap from a stale state", res, err)
	res, err = st.Swap(ctx, "gone", "c4", a, true, a, ratelimit.Decision{})
	if err != nil || res.OK || res.Found {
		t.Fatalf("swap of a bucket that is gone: %+v %v, want refused, no state", res, err)
	}
	got, found, err := st.Get(ctx, "k")
	if err != nil || !found || got.Tokens != 1.5 || !got.At.Equal(t0) {
		t.Errorf("Get: %+v %v %v, want the exact state stored", got, found, err)
	}
}

// testConcurrentTakes spends one bucket from many goroutines at one time:
// exactly the burst is allowed.
func testConcurrentTakes(t *testing.T, st ratelimit.Store) {
	b := ratelimit.New(st)
	l := ratelimit.Limit{Rate: 0.001, Burst: 10}
	var mu sync.Mutex
	allowed := 0
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			d, err := b.Take(context.Background(), "shared", l, t0)
			if err != nil {
				t.Error(err)
				return
			}
			if d.Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if allowed != l.Burst {
		t.Errorf("%d of 30 concurrent takes allowed, want the burst, %d", allowed, l.Burst)
	}
}
