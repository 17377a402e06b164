package lazyregexp_test

import (
	"regexp"
	"sync"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/lazyregexp"
)

// TestCompiledOnceWhenFirstUsed: every caller, from any goroutine, gets
// the one compiled expression, which matches as regexp.MustCompile's.
func TestCompiledOnceWhenFirstUsed(t *testing.T) {
	re := lazyregexp.New(`^[a-z]{1,3}$`)
	got := make([]*regexp.Regexp, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = re() })
	}
	wg.Wait()
	for i, r := range got {
		if r != got[0] {
			t.Fatalf("call %d returned another *regexp.Regexp than call 0", i)
		}
	}
	for s, want := range map[string]bool{"abc": true, "abcd": false, "": false, "a1": false} {
		if got := re().MatchString(s); got != want {
			t.Errorf("MatchString(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestBadPatternPanicsWhenFirstUsed: a pattern that does not compile
// panics at the first call, as regexp.MustCompile would at start, not
// when New is called.
func TestBadPatternPanicsWhenFirstUsed(t *testing.T) {
	re := lazyregexp.New(`(`)
	defer func() {
		if recover() == nil {
			t.Error("a pattern that does not compile did not panic")
		}
	}()
	re()
}
