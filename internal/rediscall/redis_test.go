package rediscall_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// TestRideAFrozenRedis: a read sent while Redis is stalled (frozen) times
// out; Ride sends it again, and gets the answer once Redis is back within
// the budget, or returns the timeout once the stall outlasts the budget
// (StallBudget of the client's options).
func TestRideAFrozenRedis(t *testing.T) {
	tests := []struct {
		name     string
		thawAt   int // the call after which Redis resumes; 0: never
		budget   func(*redis.Options) time.Duration
		wantCall int // 0: at least one
	}{
		{name: "a stall shorter than the budget", thawAt: 1, budget: func(*redis.Options) time.Duration { return time.Minute }, wantCall: 2},
		{name: "a stall that outlasts the budget", budget: rediscall.StallBudget},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			// No retries of go-redis's own: each read that times out is
			// one call Ride sees. A timeout of a second, not less: the read
			// after the thaw must not time out on a loaded machine.
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: time.Second, MaxRetries: -1})
			t.Cleanup(func() { _ = rdb.Close() })
			ctx := t.Context()
			if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			srv.Freeze(t)
			frozen := true
			t.Cleanup(func() {
				if frozen {
					srv.Thaw(t)
				}
			})
			var (
				errs []error
				got  string
			)
			err := rediscall.NewBudget(tc.budget(rdb.Options())).Ride(ctx, func() error {
				var err error
				got, err = rdb.Get(ctx, "k").Result()
				errs = append(errs, err)
				if len(errs) == tc.thawAt {
					srv.Thaw(t)
					frozen = false
				}
				return err
			})
			var timeout net.Error
			if !errors.As(errs[0], &timeout) || !timeout.Timeout() {
				t.Fatalf("first read from a frozen Redis: %v, want a timeout", errs[0])
			}
			if tc.thawAt > 0 {
				if err != nil || got != "v" || len(errs) != tc.wantCall {
					t.Errorf("Ride over a stall shorter than its budget: %q, %v after %d reads; want \"v\" after %d", got, err, len(errs), tc.wantCall)
				}
				return
			}
			if !errors.As(err, &timeout) || !timeout.Timeout() {
				t.Errorf("Ride over a stall longer than its budget: %v after %d reads; want the timeout", err, len(errs))
			}
		})
	}
}

// onceScript counts a call once per call key (KEYS[2]), and answers the
// count it made to every send of the call, as the sandbox's scripts that
// spend something do.
var onceScript = redis.NewScript(`
local made = redis.call('GET', KEYS[2])
if made then return tonumber(made) end
local n = redis.call('INCR', KEYS[1])
redis.call('SET', KEYS[2], n, 'PX', ARGV[1])
return n`)

// TestResendUnderTheSameCallID: a call that ran on Redis, which then died
// before answering (go-redis's own retries meet refused connections and
// give up), is sent again by Resend under its call id once Redis is back:
// the request gets the count its first send made, and the count is made
// once. A new call id is a new call.
func TestResendUnderTheSameCallID(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewFaultProxy(t, srv)
	rdb := proxy.NewClient(t, time.Second)
	ctx := t.Context()
	ttl := rediscall.CallTTL(rediscall.Options(rdb)).Milliseconds()
	send := func(id string) (n int64, err error) {
		err = rediscall.NewBudget(rediscall.StallBudget(rdb.Options())).Resend(ctx, func() error {
			var err error
			n, err = onceScript.Run(ctx, rdb, []string{"count", "call:" + id}, ttl).Int64()
			return err
		})
		return n, err
	}
	// Load the script, so the armed command is the EVALSHA that runs it
	// rather than one Redis answers NOSCRIPT.
	if err := onceScript.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}
	proxy.ArmMatching(func(cmd []string) bool { return strings.HasPrefix(cmd[0], "EVAL") }, 1, redistest.LoseReplyThenRefuse)
	var (
		n   int64
		err error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		n, err = send(rediscall.CallID())
	}()
	// Redis comes back once go-redis has met more refused connections than
	// it retries, or the call has ended.
	proxy.HealAfterRefusals(rdb.Options().MaxRetries+1, done)
	<-done
	if !proxy.Fired() {
		t.Fatal("the fault proxy never lost the script's answer")
	}
	if err != nil || n != 1 {
		t.Errorf("a call whose Redis died after it ran, resent: %d, %v; want the count it made, 1", n, err)
	}
	if got, err := srv.NewClient(t).Get(ctx, "count").Int64(); err != nil || got != 1 {
		t.Errorf("count after the resent call: %d, %v; want 1: made once", got, err)
	}
	if n, err := send(rediscall.CallID()); err != nil || n != 2 {
		t.Errorf("a new call: %d, %v; want 2", n, err)
	}
}
