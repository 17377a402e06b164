package conformance

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// BenchmarkEvaluateFullJournal judges a full default journal (10000
// entries) of a client hammering through 429s: the worst case for
// honours-retry-after, whose every response has many early requests.
func BenchmarkEvaluateFullJournal(b *testing.B) {
	s := newSim()
	s.fetchToken()
	for i := range 10000 {
		if i%3 == 0 {
			s.call(status(http.StatusTooManyRequests), retryAfter(1))
		} else {
			s.ping()
		}
		s.wait(10 * time.Millisecond)
	}
	b.ResetTimer()
	for range b.N {
		Evaluate(s.entries, Options{})
	}
}

// BenchmarkEvaluateSingleUseTokens judges one client whose every token
// serves one call on a connection of its own: up to 5000 programs (a full
// default journal) to tell apart and join. In sequence, each program is
// the successor of the one before; overlapping, each started before the
// previous one ended, so none joins another. The time per op grows about
// as fast as the programs (it grew with their square before).
func BenchmarkEvaluateSingleUseTokens(b *testing.B) {
	for _, tt := range []struct {
		programs int
		overlap  bool
	}{{1250, false}, {5000, false}, {1250, true}, {5000, true}} {
		b.Run(fmt.Sprintf("programs=%d/overlapping=%v", tt.programs, tt.overlap), func(b *testing.B) {
			overlap := tt.overlap
			s := newSim()
			for i := range tt.programs {
				c := conn(fmt.Sprintf("10.0.%d.%d:%d", i/250, i%250, 40000+i))
				if overlap {
					s.fetchToken(c, took(20))
					s.now = s.now.Add(-15 * time.Millisecond)
					s.call(c, took(20))
					s.now = s.now.Add(-15 * time.Millisecond)
				} else {
					s.fetchToken(c)
					s.call(c)
					s.wait(time.Second)
				}
			}
			b.ResetTimer()
			for range b.N {
				Evaluate(s.entries, Options{})
			}
		})
	}
}
