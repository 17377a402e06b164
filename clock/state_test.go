package clock_test

import (
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

func TestApplyNeverUndoesANewerState(t *testing.T) {
	real := time.Date(2026, 11, 21, 14, 0, 0, 0, time.UTC)
	global := clock.NewAdjustable(func() time.Time { return real })
	clocks := clock.NewPerClient(global)

	newer := clock.State{Version: 2, Global: time.Hour, Clients: map[string]time.Duration{"a": time.Minute}}
	if !clocks.Apply(newer) {
		t.Fatal("a first state was not applied")
	}
	if got := clocks.Now("a"); !got.Equal(real.Add(time.Hour + time.Minute)) {
		t.Errorf("a after Apply: %v", got)
	}
	// A slower request's older read arrives last: it must change nothing.
	if clocks.Apply(clock.State{Version: 1}) {
		t.Error("an older state was applied")
	}
	if global.Offset() != time.Hour {
		t.Errorf("global offset %v after an older state, want 1h", global.Offset())
	}
	// The same version again (another request's read) is harmless, and a
	// newer one without "a" drops a's own offset.
	if !clocks.Apply(clock.State{Version: 3}) {
		t.Fatal("a newer state was not applied")
	}
	if _, own := clocks.Offset("a"); own || global.Offset() != 0 {
		t.Errorf("after a newer empty state: a own=%v, global %v", own, global.Offset())
	}
}
