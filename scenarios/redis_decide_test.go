package scenarios

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// TestFireScriptOncePerCall: the same call sent twice, as go-redis sends a
// command again after its read timed out while the first still runs, takes
// effect once, and the second gets the first one's decision.
func TestFireScriptOncePerCall(t *testing.T) {
	ctx := context.Background()
	e := NewRedis(redistest.Start(t).NewClient(t), "sandbox:", 0, Config{})
	added, err := e.Add(ctx, Rule{Status: 503, Times: 2})
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{e.defsKey, e.orderKey, e.verKey, e.counterKey(added.ID), e.keys + "call:" + rediscall.CallID()}
	run := func() string {
		res, err := fireScript.Run(ctx, e.rdb, keys, added.ID, "c", 0, 2, "0", "0", "0", 1, 60000).Int64Slice()
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(res)
	}
	if first, again := run(), run(); first != "[1 1]" || again != first {
		t.Errorf("first run %s, the same call again %s; want [1 1] twice", first, again)
	}
	st, err := e.Get(ctx, added.ID)
	if err != nil || st.Matches != 1 || st.Hits != 1 || *st.Remaining != 1 {
		t.Errorf("after one call sent twice: %+v %v, want one match, one hit, one left", st, err)
	}
}

// TestDecideResendsACallWhoseNodeDied: a fire script that ran, and whose
// Redis died before answering (a master killed in a failover), may have
// spent a count; go-redis's own retries meet a refused connection and
// give up. Decide sends the call again under its id until Redis is back
// (within its stall budget), so the request gets the decision made rather
// than a 503 with the count spent (TestFaultsCluster: a times: 200 rule
// forced 198 answers).
func TestDecideResendsACallWhoseNodeDied(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewFaultProxy(t, srv)
	rdb := proxy.NewClient(t, time.Second)
	e := NewRedis(rdb, "sandbox:", 0, Config{})
	ctx := t.Context()
	added, err := e.Add(ctx, Rule{Status: 503, Times: 1})
	if err != nil {
		t.Fatal(err)
	}
	proxy.ArmMatching(func(cmd []string) bool { return strings.HasPrefix(cmd[0], "EVAL") }, 1, redistest.LoseReplyThenRefuse)
	var fired bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, fired, err = e.Decide(ctx, Request{Method: "GET", Path: "/api/v1/referrals/trials", ClientID: "c", Endpoint: EndpointAPI})
	}()
	// Redis comes back once go-redis has met more refused connections than
	// it retries (MaxRetries 3), or Decide has ended.
	proxy.HealAfterRefusals(rdb.Options().MaxRetries+1, done)
	<-done
	if err != nil || !fired {
		t.Errorf("Decide whose Redis died after the script ran, then came back: fired %v, err %v; want the decision its count was spent on", fired, err)
	}
	if live, err := srv.NewClient(t).HExists(ctx, e.defsKey, added.ID).Result(); err != nil || live {
		t.Errorf("rule %s still stored (%v): its one count was not spent", added.ID, err)
	}
}
