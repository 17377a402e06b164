package ratelimit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
)

// TestTakeResendsATakeWhoseNodeDied: a take script that ran, and whose
// Redis died before answering (a master killed in a failover), has spent a
// token; go-redis's own retries meet a refused connection and give up. The
// take is sent again under its call id until Redis is back (within the stall
// budget), so the request gets the token it spent instead of a 503, and
// the bucket holds exactly one token fewer.
func TestTakeResendsATakeWhoseNodeDied(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewFaultProxy(t, srv)
	rdb := proxy.NewClient(t, time.Second)
	buckets := ratelimit.New(ratelimit.NewRedis(rdb, "sandbox:ratelimit:"))
	limit := ratelimit.Limit{Rate: 0.001, Burst: 5}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := t.Context()

	// A first Take loads the script, so the armed command is the EVALSHA
	// that runs it rather than one Redis answers NOSCRIPT.
	if _, err := buckets.Take(ctx, "warm-up", limit, now); err != nil {
		t.Fatal(err)
	}
	proxy.ArmMatching(func(cmd []string) bool { return strings.HasPrefix(cmd[0], "EVAL") }, 1, redistest.LoseReplyThenRefuse)
	var (
		d   ratelimit.Decision
		err error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d, err = buckets.Take(ctx, "client", limit, now)
	}()
	// Redis comes back once go-redis has met more refused connections than
	// it retries (MaxRetries 3), or Take has ended.
	proxy.HealAfterRefusals(rdb.Options().MaxRetries+1, done)
	<-done
	if err != nil || !d.Allowed || d.Remaining() != 4 {
		t.Errorf("Take whose Redis died after the swap ran, then came back: %+v, err %v; want allowed with 4 tokens left (the one it spent)", d, err)
	}
	st, found, err := ratelimit.NewRedis(srv.NewClient(t), "sandbox:ratelimit:").Get(ctx, "client")
	if err != nil || !found || st.Tokens != 4 {
		t.Errorf("bucket after the resent Take: %+v found %v err %v; want 4 tokens: one spent, once", st, found, err)
	}
}
