package clock_test

import (
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

func TestPerClientMovesOneClientOnly(t *testing.T) {
	real := time.Date(2026, 11, 21, 14, 0, 0, 0, time.UTC)
	global := clock.NewAdjustable(func() time.Time { return real })
	clocks := clock.NewPerClient(global)
	a := clocks.For("a")

	clocks.Advance("a", time.Hour)
	if got := a.Now(); !got.Equal(real.Add(time.Hour)) {
		t.Errorf("a after its advance: %v", got)
	}
	if got := clocks.Now("b"); !got.Equal(real) {
		t.Errorf("b moved with a: %v", got)
	}
	global.Advance(time.Minute) // the global clock moves everyone, a too
	if got := a.Now(); !got.Equal(real.Add(time.Hour + time.Minute)) {
		t.Errorf("a after a global advance: %v", got)
	}
	if d, own := clocks.Offset("a"); !own || d != time.Hour {
		t.Errorf("a's offset %v, %v", d, own)
	}
	clocks.Set("b", real.Add(48*time.Hour))
	if got := clocks.Now("b"); !got.Equal(real.Add(48 * time.Hour)) {
		t.Errorf("b after Set: %v", got)
	}
	clocks.Reset("a")
	if got, _ := clocks.Offset("a"); got != 0 || !a.Now().Equal(global.Now()) {
		t.Errorf("a after Reset: %v", a.Now())
	}
	clocks.ResetAll()
	if _, own := clocks.Offset("b"); own {
		t.Error("b kept its offset after ResetAll")
	}
}
