package conformance

import (
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
