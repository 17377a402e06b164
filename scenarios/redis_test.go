package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// sharedEngines starts a private Redis and returns n engines sharing it, as
// n replicas would, each with its own cache.
func sharedEngines(t *testing.T, n, maxRules int) ([]*Engine, *redistest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	out := make([]*Engine, n)
	for i := range out {
		rdb := srv.NewClient(t)
		base := newTestEngine(t)
		if maxRules > 0 {
			base.maxRules = maxRules
		}
		var err error
		if out[i], err = base.Shared(rdb, "sandbox:", 0); err != nil {
			t.Fatalf("Shared: %v", err)
		}
	}
	return out, srv
}

// forEachEngine runs test against the in-memory engine and the shared one
// on a private Redis (each newEngine call starts from an empty Redis), so
// both implementations keep the same behaviour.
func forEachEngine(t *testing.T, test func(t *testing.T, newEngine func(*testing.T) *Engine)) {
	t.Run("memory", func(t *testing.T) { test(t, newTestEngine) })
	t.Run("redis", func(t *testing.T) {
		rdb := redistest.Start(t).NewClient(t)
		test(t, func(t *testing.T) *Engine {
			t.Helper()
			if err := rdb.FlushDB(context.Background()).Err(); err != nil {
				t.Fatalf("FLUSHDB: %v", err)
			}
			e, err := newTestEngine(t).Shared(rdb, "sandbox:", 0)
			if err != nil {
				t.Fatalf("Shared: %v", err)
			}
			return e
		})
	})
}

func TestSharedTimesExactAcrossReplicas(t *testing.T) {
	es, _ := sharedEngines(t, 3, 0)
	mustAdd(t, es[0], Rule{Endpoint: EndpointAPI, Status: 503, Times: 3})
	var forced atomic.Int32
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			if d, ok := es[i%3].Decide(context.Background(), apiReq(fmt.Sprint("c", i%5))); ok && d.Status == 503 {
				forced.Add(1)
			}
		})
	}
	wg.Wait()
	if got := forced.Load(); got != 3 {
		t.Fatalf("%d requests forced across three replicas, want exactly 3", got)
	}
	for i, e := range es {
		if rules := e.Rules(); len(rules) != 0 {
			t.Errorf("replica %d still lists the retired rule: %+v", i, rules)
		}
	}
}

func TestSharedPerClientAndAfterAcrossReplicas(t *testing.T) {
	es, _ := sharedEngines(t, 3, 0)
	mustAdd(t, es[1], Rule{Endpoint: EndpointAPI, Status: 429, Times: 2, After: 3, PerClient: true})
	var mu sync.Mutex
	fired := map[string]int{}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			client := fmt.Sprint("client-", i%4)
			if d, ok := es[i%3].Decide(context.Background(), apiReq(client)); ok && d.Status == 429 {
				mu.Lock()
				fired[client]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for c := range 4 {
		if n := fired[fmt.Sprint("client-", c)]; n != 2 {
			t.Errorf("client-%d forced %d times, want 2 (after 3, times 2, per client)", c, n)
		}
	}
	rules := es[2].Rules()
	if len(rules) != 1 || rules[0].Matches != 60 || rules[0].Hits != 8 || rules[0].ClientHits["client-3"] != 2 {
		t.Fatalf("status through another replica: %+v", rules)
	}
	// Clearing one client through a third replica resets only its tally.
	es[0].ClearClient("client-3")
	rules = es[1].Rules()
	if _, ok := rules[0].ClientHits["client-3"]; ok || rules[0].ClientHits["client-2"] != 2 {
		t.Errorf("after ClearClient(client-3): %+v", rules[0].ClientHits)
	}
}

// TestSharedSeededProbabilityMatchesInMemory checks that a seeded rule fires
// on the same matches, with the same delays, whether one in-memory engine or
// three replicas sharing Redis answer.
func TestSharedSeededProbabilityMatchesInMemory(t *testing.T) {
	rule := Rule{ID: "flaky", Status: 503, Probability: 0.3, Seed: 42,
		Delay: &Delay{Median: Duration(100 * time.Millisecond), Sigma: 1}}
	run := func(pick func(i int) *Engine) string {
		var out []string
		for i := range 200 {
			d, ok := pick(i).Decide(context.Background(), apiReq("a"))
			out = append(out, fmt.Sprint(ok, d.Delay))
		}
		return fmt.Sprint(out)
	}
	mem := newTestEngine(t)
	mustAdd(t, mem, rule)
	es, _ := sharedEngines(t, 3, 0)
	mustAdd(t, es[0], rule)
	want := run(func(int) *Engine { return mem })
	if got := run(func(i int) *Engine { return es[(i*7/3)%3] }); got != want {
		t.Fatalf("shared replicas decided differently from the in-memory engine:\n got %s\nwant %s", got, want)
	}
}

func TestSharedRuleCapAcrossReplicas(t *testing.T) {
	es, _ := sharedEngines(t, 3, 5)
	var ok, full atomic.Int32
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			_, err := es[i%3].Add(Rule{Status: 503})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrTooManyRules):
				full.Add(1)
			default:
				t.Errorf("Add: %v", err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 5 || full.Load() != 7 {
		t.Fatalf("%d added, %d refused; want 5 and 7 with a cap of 5", ok.Load(), full.Load())
	}
	ids := map[string]bool{}
	for _, r := range es[2].Rules() {
		ids[r.ID] = true
	}
	if len(ids) != 5 {
		t.Errorf("rules listed: %v, want 5 distinct ids", ids)
	}
	if _, err := es[1].Activate("flaky", "ci-1"); !errors.Is(err, ErrTooManyRules) {
		t.Errorf("Activate past the cap: %v", err)
	}
}

func TestSharedRuleManagementAcrossReplicas(t *testing.T) {
	es, _ := sharedEngines(t, 2, 0)
	a, b := es[0], es[1]
	added := mustAdd(t, a, Rule{ID: "mine", Status: 500})
	if _, err := b.Add(Rule{ID: "mine", Status: 500}); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("duplicate id through another replica: %v", err)
	}
	if d, ok := b.Decide(context.Background(), apiReq("x")); !ok || d.RuleID != added.ID || d.Status != 500 {
		t.Errorf("replica B decided %+v %v, want the rule added through A", d, ok)
	}
	if !b.Remove("mine") || a.Remove("mine") {
		t.Error("Remove through B then A: want true then false")
	}
	if _, ok := a.Decide(context.Background(), apiReq("x")); ok {
		t.Error("A still fires a rule removed through B")
	}
	rules, err := a.Activate("flaky", "ci-1")
	if err != nil || len(rules) == 0 {
		t.Fatalf("Activate: %v %v", rules, err)
	}
	if act := b.Active(); len(act) != 1 || act[0].Name != "flaky" || act[0].ClientID != "ci-1" {
		t.Errorf("activations through B: %+v", act)
	}
	b.ClearClient("ci-1")
	if act, st := a.Active(), a.Rules(); len(act) != 0 || len(st) != 0 {
		t.Errorf("after ClearClient through B, A lists %+v %+v", act, st)
	}
}

// TestSharedKeepsStartupActivations: a replica's start-up scenarios are
// shared, and a replica starting later does not reset their counters.
func TestSharedKeepsStartupActivations(t *testing.T) {
	srv := redistest.Start(t)
	start := func() *Engine {
		rdb := srv.NewClient(t)
		local := newTestEngine(t)
		if _, err := local.Activate("flaky", ""); err != nil {
			t.Fatal(err)
		}
		e, err := local.Shared(rdb, "sandbox:", 0)
		if err != nil {
			t.Fatalf("Shared: %v", err)
		}
		return e
	}
	a := start()
	for range 5 {
		a.Decide(context.Background(), Request{Method: "POST", Path: "/api/v1/referrals/qualified", ClientID: "x", Endpoint: EndpointAPI})
	}
	before := a.Rules()
	b := start()
	after := b.Rules()
	if len(a.Active()) != 1 || len(before) == 0 || fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("second replica changed the shared scenario:\nbefore %+v\nafter  %+v", before, after)
	}
}

func TestSharedRedisDownAnswers503(t *testing.T) {
	es, srv := sharedEngines(t, 1, 0)
	srv.Stop(t)
	d, ok := es[0].Decide(context.Background(), apiReq("x"))
	if !ok || d.Status != 503 || d.RetryAfter <= 0 {
		t.Fatalf("Decide with Redis down: %+v %v, want a 503 with Retry-After", d, ok)
	}
	if _, err := es[0].Add(Rule{Status: 500}); err == nil {
		t.Error("Add with Redis down succeeded")
	}
}
