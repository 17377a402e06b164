// Package clocktest is the conformance suite of clock.Store: the memory and
// the Redis store move clocks alike, refuse the same out-of-range moves,
// and a move that returns has been taken. It is not a stable API.
package clocktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

// Real is the fixed real time the suite's clocks run on.
var Real = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// Open returns an empty store moving clocks, a PerClient over an
// Adjustable whose real time is Real.
type Open func(t *testing.T, clocks *clock.PerClient) clock.Store

// OpenOver returns an empty store and the clocks it moves, a PerClient it
// built over sandbox, an Adjustable whose real time is Real. It is for
// what builds its client clocks itself from the sandbox clock, as a
// backend does, so the suite checks the clocks that are really moved.
type OpenOver func(t *testing.T, sandbox *clock.Adjustable) (clock.Store, *clock.PerClient)

// Run runs the suite.
func Run(t *testing.T, open Open) {
	RunOver(t, func(t *testing.T, sandbox *clock.Adjustable) (clock.Store, *clock.PerClient) {
		clocks := clock.NewPerClient(sandbox)
		return open(t, clocks), clocks
	})
}

// RunOver runs the suite on stores that build their own client clocks.
func RunOver(t *testing.T, open OpenOver) {
	t.Run("Moves", func(t *testing.T) { testMoves(t, open) })
	t.Run("Range", func(t *testing.T) { testRange(t, open) })
}

// openOnReal opens a store over a new sandbox clock at Real, and fails t
// unless its clocks read that clock: the suite's times hold only then.
func openOnReal(t *testing.T, open OpenOver) (clock.Store, *clock.PerClient) {
	t.Helper()
	sandbox := clock.NewAdjustable(func() time.Time { return Real })
	st, clocks := open(t, sandbox)
	if clocks.Global() != sandbox {
		t.Fatal("the store's clocks are not over the sandbox clock it was given")
	}
	return st, clocks
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func want(t *testing.T, clocks *clock.PerClient, clientID string, at time.Time) {
	t.Helper()
	if got := clocks.Now(clientID); !got.Equal(at) {
		t.Errorf("clock of %q at %v, want %v", clientID, got, at)
	}
}

func testMoves(t *testing.T, open OpenOver) {
	ctx := context.Background()
	st, clocks := openOnReal(t, open)
	must(t, st.Advance(ctx, "", time.Hour))
	must(t, st.Advance(ctx, "", time.Hour)) // advances add up
	want(t, clocks, "", Real.Add(2*time.Hour))
	must(t, st.Advance(ctx, "a", -30*time.Minute))
	want(t, clocks, "a", Real.Add(90*time.Minute))
	want(t, clocks, "b", Real.Add(2*time.Hour))
	target := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	must(t, st.Set(ctx, "b", target))
	want(t, clocks, "b", target)
	must(t, st.Set(ctx, "", Real.Add(-time.Hour))) // clients' own offsets stay
	want(t, clocks, "", Real.Add(-time.Hour))
	want(t, clocks, "a", Real.Add(-90*time.Minute))
	must(t, st.Reset(ctx, "a"))
	want(t, clocks, "a", Real.Add(-time.Hour))
	must(t, st.Reset(ctx, ""))
	want(t, clocks, "", Real)
	want(t, clocks, "b", target.Add(-2*time.Hour)) // its own offset, set when the sandbox was 2h ahead
	must(t, st.ResetAll(ctx))
	want(t, clocks, "b", Real)
}

func testRange(t *testing.T, open OpenOver) {
	ctx := context.Background()
	st, clocks := openOnReal(t, open)
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, clock.ErrOutOfRange) {
			t.Errorf("%s: %v, want ErrOutOfRange", what, err)
		}
	}
	refused("advance by the longest duration", st.Advance(ctx, "", time.Duration(1<<63-1)))
	refused("advance by the most negative duration", st.Advance(ctx, "", time.Duration(-1<<63)))
	refused("set to 9999", st.Set(ctx, "", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)))
	refused("set before 1970", st.Set(ctx, "a", time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC)))
	must(t, st.Set(ctx, "", clock.Latest)) // the ends are in range
	refused("one more second", st.Advance(ctx, "", time.Second))
	must(t, st.Set(ctx, "", clock.Earliest.Add(time.Hour)))
	must(t, st.Advance(ctx, "a", 100*365*24*time.Hour))
	// Moving the sandbox clock moves a's too, which would leave the range.
	refused("a global advance past a's end", st.Advance(ctx, "", 150*365*24*time.Hour))
	want(t, clocks, "", clock.Earliest.Add(time.Hour)) // refused moves change nothing
	want(t, clocks, "a", clock.Earliest.Add(time.Hour+100*365*24*time.Hour))
}
