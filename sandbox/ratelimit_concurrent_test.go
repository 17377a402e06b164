package sandbox_test

import (
	"net/http"
	"sync"
	"testing"
)

// TestRateLimitConcurrentCallersUnderTheirRate: 50 concurrent callers of
// one client, well within its burst of 2,000, on two replicas sharing one
// bucket, each ping 12 times. Every ping is answered 200: none gets 503
// for a bucket that many spend from at once, and the bucket ends exactly
// 600 tokens down (the rate is slow enough that nothing refills during
// the test).
func TestRateLimitConcurrentCallersUnderTheirRate(t *testing.T) {
	const callers, pings, burst = 50, 12, 2000
	rs := newSharedReplicas(t, 2, withRateLimit(0.001, burst))
	tok := rs.all[0].token(partner)
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		example  string
	)
	var wg sync.WaitGroup
	for i := range callers {
		s := rs.all[i%len(rs.all)]
		wg.Go(func() {
			for range pings {
				r := s.do(request{path: "/health/ping", token: tok, plain: true})
				mu.Lock()
				statuses[r.Status]++
				if r.Status != http.StatusOK && example == "" {
					example = string(r.Body)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if statuses[http.StatusOK] != callers*pings {
		t.Errorf("%d concurrent pings under the rate answered %v, want all 200; e.g. %s", callers*pings, statuses, example)
	}
	r := rs.all[1].do(request{path: "/health/ping", token: tok, plain: true})
	if got, want := r.Header.Get("RateLimit-Remaining"), "1399"; got != want {
		t.Errorf("RateLimit-Remaining after %d pings and this one: %s, want %s", callers*pings, got, want)
	}
}
