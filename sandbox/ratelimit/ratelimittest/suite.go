// Package ratelimittest is the conformance suite of ratelimit.Store: every
// store runs it, so that the same limit, burst and clock moves give the
// same allowed, remaining and retry-after whatever keeps the buckets. It is
// not a stable API.
package ratelimittest

import (
	"cmp"
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
	t.Run("ExactState", func(t *testing.T) { testExactState(t, open(t)) })
	t.Run("ConcurrentTakes", func(t *testing.T) { testConcurrentTakes(t, open(t)) })
	t.Run("TwoReplicas", func(t *testing.T) { testTwoReplicas(t, open(t)) })
	t.Run("ConcurrentCallersUnderTheRate", func(t *testing.T) { testConcurrentCallersUnderTheRate(t, open(t)) })
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

// testRetriedCall replays a Take as a client library's retry would: the
// second try answers the first decision and spends nothing more, even
// after another call changed the bucket; a refused call records nothing.
func testRetriedCall(t *testing.T, st ratelimit.Store) {
	ctx := context.Background()
	l := ratelimit.Limit{Rate: 0.001, Burst: 2}
	for try := range 2 {
		d, err := st.Take(ctx, "k", "call-1", l, t0)
		if err != nil || !d.Allowed || d.Remaining() != 1 {
			t.Fatalf("try %d: %+v %v, want allowed with 1 left, the first decision", try, d, err)
		}
	}
	if d, err := st.Take(ctx, "k", "call-2", l, t0); err != nil || !d.Allowed || d.Remaining() != 0 {
		t.Fatalf("second call: %+v %v, want the last token", d, err)
	}
	if d, err := st.Take(ctx, "k", "call-1", l, t0); err != nil || !d.Allowed || d.Remaining() != 1 {
		t.Fatalf("late retry: %+v %v, want the first decision again", d, err)
	}
	cur, found, err := st.Get(ctx, "k")
	if err != nil || !found || cur.Tokens != 0 || !cur.At.Equal(t0) {
		t.Errorf("bucket after a late retry: %+v %v %v, want 0 tokens at t0", cur, found, err)
	}
	// A refused call spends nothing and is judged again when repeated:
	// once time has refilled a token, its repeat is allowed.
	if d, err := st.Take(ctx, "k", "call-3", l, t0); err != nil || d.Allowed {
		t.Fatalf("a third token of a burst of 2: %+v %v", d, err)
	}
	if d, err := st.Take(ctx, "k", "call-3", l, t0.Add(1000*time.Second)); err != nil || !d.Allowed {
		t.Fatalf("the refused call repeated once a token refilled: %+v %v, want allowed", d, err)
	}
}

// testExactState pins the state a store keeps and reads back to the bit:
// tokens that are no short decimal, and times before 1970 and within one
// second of each other, whose nanoseconds must not be lost.
func testExactState(t *testing.T, st ratelimit.Store) {
	ctx := context.Background()
	b := ratelimit.New(st)
	l := ratelimit.Limit{Rate: 3, Burst: 7}
	for _, start := range []time.Time{t0, time.Unix(-2, 999_999_999).UTC(), time.Unix(0, 7).UTC()} {
		key := start.String()
		for i := range l.Burst { // all of it at start: empty
			if d, err := b.Take(ctx, key, l, start); err != nil || !d.Allowed {
				t.Fatalf("%s: take %d: %+v %v", key, i, d, err)
			}
		}
		// The bucket as stored: a refusal the clock did not move back
		// from stores nothing, so the next refill counts from storedAt.
		now, storedAt, stored := start, start, 0.0
		var want float64
		for _, step := range []time.Duration{333_333_333, time.Nanosecond, 1_000_000_001, -time.Hour} {
			now = now.Add(step)
			want = stored
			if elapsed := now.Sub(storedAt); elapsed > 0 {
				want = min(float64(l.Burst), stored+float64(elapsed.Seconds()*l.Rate))
			}
			allowed := want >= 1
			if allowed {
				want--
			}
			if allowed || now.Before(storedAt) {
				stored, storedAt = want, now
			}
			d, err := b.Take(ctx, key, l, now)
			if err != nil || d.Allowed != allowed || d.Tokens != want {
				t.Fatalf("%s: take at %v: %+v %v, want allowed %v with %.17g tokens", key, now, d, err, allowed, want)
			}
		}
		got, found, err := st.Get(ctx, key)
		if err != nil || !found || got.Tokens != stored || !got.At.Equal(storedAt) {
			t.Errorf("%s: Get: %+v %v %v, want %.17g tokens at %v exactly", key, got, found, err, stored, storedAt)
		}
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

// testConcurrentCallersUnderTheRate: 50 callers of one client, on two
// replicas (two Buckets over one store), take 12 tokens each at one time,
// well within the burst. Every take is allowed and none fails: a caller
// under its rate never gets an error (a 503), however many take at once,
// and the bucket ends exactly 600 tokens down.
func testConcurrentCallersUnderTheRate(t *testing.T, st ratelimit.Store) {
	const callers, takes = 50, 12
	replicas := []*ratelimit.Buckets{ratelimit.New(st), ratelimit.New(st)}
	l := ratelimit.Limit{Rate: 1000, Burst: 2000}
	var (
		mu              sync.Mutex
		allowed, failed int
		firstErr        error
	)
	var wg sync.WaitGroup
	for i := range callers {
		b := replicas[i%len(replicas)]
		wg.Go(func() {
			for range takes {
				d, err := b.Take(context.Background(), "busy-client", l, t0)
				mu.Lock()
				switch {
				case err != nil:
					failed++
					firstErr = cmp.Or(firstErr, err)
				case d.Allowed:
					allowed++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if allowed != callers*takes || failed != 0 {
		t.Errorf("%d concurrent takes under the rate: %d allowed, %d failed (first: %v); want all allowed, none failed",
			callers*takes, allowed, failed, firstErr)
	}
	left, err := replicas[0].Peek(context.Background(), "busy-client", l, t0)
	if err != nil || left.Remaining() != l.Burst-allowed {
		t.Errorf("bucket after %d allowed takes: %d left (%v), want %d", allowed, left.Remaining(), err, l.Burst-allowed)
	}
}
