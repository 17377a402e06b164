package clock_test

import (
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

// TestAdjustable moves sandbox time forward, to a set time and back to real
// time, over a stepping "real" clock so every answer is exact.
func TestAdjustable(t *testing.T) {
	real := time.Date(2026, 11, 21, 14, 0, 0, 0, time.UTC)
	c := clock.NewAdjustable(func() time.Time { return real })

	if got := c.Now(); !got.Equal(real) || c.Offset() != 0 {
		t.Fatalf("fresh clock: %v offset %v, want real time", got, c.Offset())
	}
	c.Advance(time.Hour)
	if got := c.Now(); !got.Equal(real.Add(time.Hour)) {
		t.Fatalf("after Advance(1h): %v", got)
	}
	real = real.Add(time.Minute) // time keeps flowing after an advance
	if got := c.Now(); !got.Equal(real.Add(time.Hour)) {
		t.Fatalf("an advanced clock stopped: %v", got)
	}
	target := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	c.Set(target)
	if got := c.Now(); !got.Equal(target) {
		t.Fatalf("after Set: %v, want %v", got, target)
	}
	c.Reset()
	if got := c.Now(); !got.Equal(real) || c.Offset() != 0 {
		t.Fatalf("after Reset: %v offset %v, want real time", got, c.Offset())
	}
	if got := c.Now(); got.Location() != time.UTC {
		t.Fatalf("Now is in %v, want UTC", got.Location())
	}
}
