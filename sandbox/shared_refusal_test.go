package sandbox_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// scriptSends counts the script calls (EVALSHA, EVAL) a Redis client sends
// whose arguments hold a marker: each send of a script, go-redis's own
// retries of one send apart.
type scriptSends struct {
	mu     sync.Mutex
	counts map[string]int // marker -> sends
}

func (c *scriptSends) sent(marker string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[marker]
}

func (c *scriptSends) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *scriptSends) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			args := fmt.Sprint(cmd.Args())
			c.mu.Lock()
			for marker := range c.counts {
				if strings.Contains(args, marker) {
					c.counts[marker]++
				}
			}
			c.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (c *scriptSends) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestSharedRefusedWriteFailsAtOnce: a Redis that refuses writes
// (maxmemory reached, noeviction) has answered: the refusal is final. A
// ping or API call whose rate-limit take, or whose scenario rule's count,
// Redis refuses answers 503 with Retry-After after one send of its script, not
// after sending it again for the whole stall budget (seconds per request),
// and its problem says what happened: refused by Redis, out of memory.
func TestSharedRefusedWriteFailsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		path   string
		opts   []sandboxOption
		rule   bool   // a ping rule is active, so its count is a script call
		marker string // in the keys of the script whose sends are counted
	}{
		{name: "ping's rate-limit take", path: "/health/ping", opts: []sandboxOption{withRateLimit(1000, 2000)}, marker: "ratelimit:"},
		{name: "API call's rate-limit take", path: trialsPath, opts: []sandboxOption{withRateLimit(1000, 2000)}, marker: "ratelimit:"},
		{name: "ping's rule count", path: "/health/ping", opts: []sandboxOption{withRateLimit(0, 0)}, rule: true, marker: ":call:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			// go-redis's defaults: 3 retries, reads timing out after 3 s,
			// so a request may ride a stall for 12 s.
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
			sends := &scriptSends{counts: map[string]int{tc.marker: 0}}
			rdb.AddHook(sends)
			t.Cleanup(func() { _ = rdb.Close() })
			st, err := store.Open(store.MemoryPath)
			if err != nil {
				t.Fatal(err)
			}
			sb := newSandbox(t, append([]sandboxOption{useStore(st), useRedis(rdb)}, tc.opts...)...)
			if tc.rule {
				// Fires never (after a million matches), but counts each.
				sb.addRule(map[string]any{"endpoint": "ping", "status": 500, "after": 1000000})
			}
			tok := sb.token(partner)
			// A first call loads the script, so the counted send is an EVALSHA
			// Redis runs, not one it answers NOSCRIPT.
			if r := sb.do(request{path: tc.path, token: tok, plain: true}); r.Status != http.StatusOK {
				t.Fatalf("call before writes are refused: %d %s", r.Status, r.Body)
			}
			redistest.RefuseWrites(t, srv.NewClient(t))

			// Calls one after another: each is refused on its own send,
			// none waits behind another's.
			const pings = 3
			before := sends.sent(tc.marker)
			var r *response
			for i := range pings {
				r = sb.do(request{path: tc.path, token: tok, plain: true})
				wantUnavailable(t, fmt.Sprintf("call %d with writes refused", i+1), r)
			}
			if got := sends.sent(tc.marker) - before; got != pings {
				t.Errorf("%d calls sent their script %d times, want once each: Redis's refusal is final", pings, got)
			}
			var p sandbox.Problem
			r.decode(t, &p)
			if !strings.Contains(p.Detail, "refused") || !strings.Contains(p.Detail, "out of memory") || strings.Contains(p.Detail, "cannot be reached") {
				t.Errorf("problem detail %q, want it to say Redis refused the write: out of memory", p.Detail)
			}
			for _, leak := range []string{srv.Addr, tok, "maxmemory'", "script:", "@user_script"} {
				if strings.Contains(string(r.Body), leak) {
					t.Errorf("the 503 quotes %q: %s", leak, r.Body)
				}
			}
		})
	}
}
