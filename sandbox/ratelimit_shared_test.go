package sandbox_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redisslot"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// remainingBurst spends tok's bucket until a 429 and returns how many
// calls were allowed.
func remainingBurst(s *testSandbox, tok string, most int) int {
	allowed := 0
	for range most + 1 {
		r := s.do(request{path: trialsPath, token: tok, plain: true})
		if r.Status != http.StatusOK {
			break
		}
		allowed++
	}
	return allowed
}

// TestRateLimitSpendsOnceWhenAReplyIsLost: go-redis retries a command whose
// reply it did not get (a read that timed out, a connection cut), and the
// first try has run all the same. The fault proxy runs the bucket's script
// and loses its reply: the request, retried by go-redis, must spend one
// token, not two.
func TestRateLimitSpendsOnceWhenAReplyIsLost(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewFaultProxy(t, srv)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr, ContextTimeoutEnabled: true}) // go-redis's default retries
	t.Cleanup(func() { _ = rdb.Close() })
	const burst = 6
	s := newSandbox(t, useRedis(rdb), withRateLimit(slowRate, burst))
	tok := s.token(partner)
	if r := s.do(request{path: trialsPath, token: tok, plain: true}); r.Status != http.StatusOK {
		t.Fatalf("first call: %d %s", r.Status, r.Body) // its scripts are loaded now
	}

	// The first script on the bucket's key: the spend.
	proxy.ArmMatching(func(cmd []string) bool {
		return (cmd[0] == "EVALSHA" || cmd[0] == "EVAL") && redistest.Touching("ratelimit:"+redisslot.ClientTag(partner))(cmd)
	}, 1, redistest.LoseReply)
	r := s.do(request{path: trialsPath, token: tok, plain: true})
	if !proxy.Fired() {
		t.Fatalf("no script ran for the request: %v", proxy.Seen())
	}
	if r.Status != http.StatusOK {
		t.Fatalf("request whose script reply was lost once: %d %s, want 200 (go-redis retries)", r.Status, r.Body)
	}
	proxy.Arm(0, redistest.Drop)
	if got := remainingBurst(s, tok, burst); got != burst-2 {
		t.Errorf("%d calls allowed after two calls of a burst of %d, want %d: the call whose reply was lost spent %d tokens",
			got, burst, burst-2, burst-1-got)
	}
}

// TestRateLimitDuringClientPause: a request caught by a Redis pause longer
// than the Redis timeout answers 503 with Retry-After (or 200 if a retry
// got through), and spends one token at most.
func TestRateLimitDuringClientPause(t *testing.T) {
	t.Parallel() // on a Redis of its own
	srv := redistest.Start(t)
	// A timeout of a second, as --redis-timeout 1s, and go-redis's default
	// retries (3, with backoffs under 512 ms): a pause of pauseMillis
	// outlasts every try. A shorter timeout failed the calls around the
	// pause on a loaded 2-core machine, when Redis itself was slow.
	const pauseMillis = "7000"
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: time.Second, WriteTimeout: time.Second, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	const burst = 6
	s := newSandbox(t, useRedis(rdb), withRateLimit(slowRate, burst))
	tok := s.token(partner)
	if r := s.do(request{path: trialsPath, token: tok, plain: true}); r.Status != http.StatusOK {
		t.Fatalf("first call: %d %s", r.Status, r.Body)
	}
	admin := srv.NewClient(t)
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", pauseMillis, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	stalled := s.do(request{path: trialsPath, token: tok, plain: true})
	spent := 0
	switch stalled.Status {
	case http.StatusOK:
		spent = 1
	case http.StatusServiceUnavailable:
		if stalled.Header.Get("Retry-After") == "" {
			t.Errorf("503 without Retry-After")
		}
	default:
		t.Fatalf("call during the pause: %d %s, want 200 or 503", stalled.Status, stalled.Body)
	}
	// A write through another connection returns once the pause is over.
	if err := admin.Set(context.Background(), "test:resumed", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got := remainingBurst(s, tok, burst); got < burst-2 || got+spent > burst-1 {
		t.Errorf("after the pause (answered %d): %d calls allowed of a burst of %d with 1 spent before", stalled.Status, got, burst)
	}
}
