package logthrottle_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/logthrottle"
)

// fakeTime is a time source the test moves.
type fakeTime struct{ t time.Time }

func (f *fakeTime) now() time.Time { return f.t }

func TestOneLinePerKeyPerInterval(t *testing.T) {
	ft := &fakeTime{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	th := logthrottle.New(time.Second, ft.now)
	if ok, n := th.Allow("a"); !ok || n != 0 {
		t.Fatalf("first line: %v %d, want allowed with none held back", ok, n)
	}
	for i := range 99 {
		if ok, _ := th.Allow("a"); ok {
			t.Fatalf("line %d within the second was allowed", i+2)
		}
	}
	if ok, _ := th.Allow("b"); !ok {
		t.Error("another key was held back by the first one's lines")
	}
	ft.t = ft.t.Add(999 * time.Millisecond)
	if ok, _ := th.Allow("a"); ok {
		t.Error("a line before the second was up was allowed")
	}
	ft.t = ft.t.Add(time.Millisecond)
	if ok, n := th.Allow("a"); !ok || n != 100 {
		t.Errorf("after a second: %v with %d held back, want allowed with 100", ok, n)
	}
	ft.t = ft.t.Add(time.Hour)
	if ok, n := th.Allow("a"); !ok || n != 0 {
		t.Errorf("an hour later: %v %d, want allowed with none held back", ok, n)
	}
}

// TestKeysBounded: made-up keys beyond MaxKeys share one slot, so they
// cannot grow the map nor each get a line.
func TestKeysBounded(t *testing.T) {
	ft := &fakeTime{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	th := logthrottle.New(time.Second, ft.now)
	allowed := 0
	for i := range logthrottle.MaxKeys + 1000 {
		if ok, _ := th.Allow(fmt.Sprint("source-", i)); ok {
			allowed++
		}
	}
	if allowed != logthrottle.MaxKeys+1 {
		t.Errorf("%d lines allowed in one second from %d keys, want %d (one per tracked key, one for the rest)", allowed, logthrottle.MaxKeys+1000, logthrottle.MaxKeys+1)
	}
	// A second later the quiet keys are forgotten and new ones get a line.
	ft.t = ft.t.Add(time.Second)
	if ok, _ := th.Allow("newcomer"); !ok {
		t.Error("a new key a second later was held back")
	}
}
