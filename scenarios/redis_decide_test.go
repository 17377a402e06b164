package scenarios

import (
	"context"
	"fmt"
	"testing"

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
	keys := []string{e.defsKey, e.orderKey, e.verKey, e.counterKey(added.ID), e.keys + "call:" + newCallID()}
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
