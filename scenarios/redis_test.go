package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

var testNow = time.Date(2025, 11, 3, 9, 30, 0, 0, time.UTC)

// testConfig is the embedded library and a fixed clock.
func testConfig(t *testing.T) scenarios.Config {
	t.Helper()
	lib, err := scenarios.LoadLibrary()
	if err != nil {
		t.Fatalf("LoadLibrary: %v", err)
	}
	return scenarios.Config{Library: lib, Clock: clock.Func(func() time.Time { return testNow })}
}

// replicas starts a private Redis and returns n engines sharing it, as n
// replicas would, each with its own client and cache.
func replicas(t *testing.T, n int) ([]*scenarios.RedisEngine, *redistest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	out := make([]*scenarios.RedisEngine, n)
	for i := range out {
		out[i] = scenarios.NewRedis(srv.NewClient(t), "sandbox:", 0, testConfig(t))
	}
	return out, srv
}

func mustAdd(t *testing.T, e scenarios.Engine, r scenarios.Rule) scenarios.RuleStatus {
	t.Helper()
	added, err := e.Add(context.Background(), r)
	if err != nil {
		t.Fatalf("Add(%+v): %v", r, err)
	}
	return added
}

func mustRules(t *testing.T, e scenarios.Engine) []scenarios.RuleStatus {
	t.Helper()
	rs, err := e.Rules(context.Background())
	if err != nil {
		t.Fatalf("Rules: %v", err)
	}
	return rs
}

func apiReq(client string) scenarios.Request {
	return scenarios.Request{Method: "GET", Path: "/api/v1/referrals/trials", ClientID: client, Endpoint: scenarios.EndpointAPI}
}

func TestSharedTimesExactAcrossReplicas(t *testing.T) {
	es, _ := replicas(t, 3)
	mustAdd(t, es[0], scenarios.Rule{Endpoint: scenarios.EndpointAPI, Status: 503, Times: 3})
	var forced atomic.Int32
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			d, ok, err := es[i%3].Decide(context.Background(), apiReq(fmt.Sprint("c", i%5)))
			if err != nil {
				t.Errorf("Decide: %v", err)
			}
			if ok && d.Status == 503 {
				forced.Add(1)
			}
		})
	}
	wg.Wait()
	if got := forced.Load(); got != 3 {
		t.Fatalf("%d requests forced across three replicas, want exactly 3", got)
	}
	for i, e := range es {
		if rules := mustRules(t, e); len(rules) != 0 {
			t.Errorf("replica %d still lists the retired rule: %+v", i, rules)
		}
	}
}

func TestSharedPerClientAndAfterAcrossReplicas(t *testing.T) {
	es, _ := replicas(t, 3)
	mustAdd(t, es[1], scenarios.Rule{Endpoint: scenarios.EndpointAPI, Status: 429, Times: 2, After: 3, PerClient: true})
	var mu sync.Mutex
	fired := map[string]int{}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			client := fmt.Sprint("client-", i%4)
			d, ok, err := es[i%3].Decide(context.Background(), apiReq(client))
			if err != nil {
				t.Errorf("Decide: %v", err)
			}
			if ok && d.Status == 429 {
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
	rules := mustRules(t, es[2])
	if len(rules) != 1 || rules[0].Matches != 60 || rules[0].Hits != 8 || rules[0].ClientHits["client-3"] != 2 {
		t.Fatalf("status through another replica: %+v", rules)
	}
	// Clearing one client through a third replica resets only its tally.
	if err := es[0].ClearClient(context.Background(), "client-3"); err != nil {
		t.Fatal(err)
	}
	rules = mustRules(t, es[1])
	if _, ok := rules[0].ClientHits["client-3"]; ok || rules[0].ClientHits["client-2"] != 2 {
		t.Errorf("after ClearClient(client-3): %+v", rules[0].ClientHits)
	}
}

// TestSharedSeededProbabilityMatchesInMemory checks that a seeded rule fires
// on the same matches, with the same delays, whether one in-memory engine or
// three replicas sharing Redis answer.
func TestSharedSeededProbabilityMatchesInMemory(t *testing.T) {
	rule := scenarios.Rule{ID: "flaky", Status: 503, Probability: 0.3, Seed: 42,
		Delay: &scenarios.Delay{Median: scenarios.Duration(100 * time.Millisecond), Sigma: 1}}
	run := func(pick func(i int) scenarios.Engine) string {
		var out []string
		for i := range 200 {
			d, ok, err := pick(i).Decide(context.Background(), apiReq("a"))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(ok, d.Delay))
		}
		return fmt.Sprint(out)
	}
	mem := scenarios.New(testConfig(t))
	mustAdd(t, mem, rule)
	es, _ := replicas(t, 3)
	mustAdd(t, es[0], rule)
	want := run(func(int) scenarios.Engine { return mem })
	if got := run(func(i int) scenarios.Engine { return es[(i*7/3)%3] }); got != want {
		t.Fatalf("shared replicas decided differently from the in-memory engine:\n got %s\nwant %s", got, want)
	}
}

func TestSharedRuleManagementAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	es, _ := replicas(t, 2)
	a, b := es[0], es[1]
	added := mustAdd(t, a, scenarios.Rule{ID: "mine", Status: 500})
	if _, err := b.Add(ctx, scenarios.Rule{ID: "mine", Status: 500}); !errors.Is(err, scenarios.ErrDuplicateID) {
		t.Errorf("duplicate id through another replica: %v", err)
	}
	if d, ok, err := b.Decide(ctx, apiReq("x")); err != nil || !ok || d.RuleID != added.ID || d.Status != 500 {
		t.Errorf("replica B decided %+v %v %v, want the rule added through A", d, ok, err)
	}
	if err := b.Remove(ctx, "mine"); err != nil {
		t.Errorf("Remove through B: %v", err)
	}
	if err := a.Remove(ctx, "mine"); !errors.Is(err, scenarios.ErrNotFound) {
		t.Errorf("Remove again through A: %v, want ErrNotFound", err)
	}
	if _, ok, _ := a.Decide(ctx, apiReq("x")); ok {
		t.Error("A still fires a rule removed through B")
	}
	rules, err := a.Activate(ctx, "flaky", "ci-1")
	if err != nil || len(rules) == 0 {
		t.Fatalf("Activate: %v %v", rules, err)
	}
	if act, err := b.Active(ctx); err != nil || len(act) != 1 || act[0].Name != "flaky" || act[0].ClientID != "ci-1" {
		t.Errorf("activations through B: %+v %v", act, err)
	}
	if err := b.ClearClient(ctx, "ci-1"); err != nil {
		t.Fatal(err)
	}
	act, _ := a.Active(ctx)
	if st := mustRules(t, a); len(act) != 0 || len(st) != 0 {
		t.Errorf("after ClearClient through B, A lists %+v %+v", act, st)
	}
}

// TestSharedKeepsStartupActivations: a replica's start-up scenarios are
// shared, and a replica starting later does not reset their counters.
func TestSharedKeepsStartupActivations(t *testing.T) {
	srv := redistest.Start(t)
	start := func() *scenarios.RedisEngine {
		e := scenarios.NewRedis(srv.NewClient(t), "sandbox:", 0, testConfig(t))
		if err := e.Adopt(context.Background(), []scenarios.Activation{{Name: "flaky"}}); err != nil {
			t.Fatalf("Adopt: %v", err)
		}
		return e
	}
	a := start()
	for range 5 {
		if _, _, err := a.Decide(context.Background(), scenarios.Request{Method: "POST", Path: "/api/v1/referrals/qualified", ClientID: "x", Endpoint: scenarios.EndpointAPI}); err != nil {
			t.Fatal(err)
		}
	}
	before := mustRules(t, a)
	b := start()
	after := mustRules(t, b)
	if act, _ := a.Active(context.Background()); len(act) != 1 || len(before) == 0 || fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("second replica changed the shared scenario:\nbefore %+v\nafter  %+v", before, after)
	}
}

// TestSharedRedisDownIsUnavailable: with Redis gone, every method answers
// ErrUnavailable, never "no rule", "not found" or "done".
func TestSharedRedisDownIsUnavailable(t *testing.T) {
	es, srv := replicas(t, 1)
	e := es[0]
	mustAdd(t, e, scenarios.Rule{ID: "r", Status: 500})
	if _, err := e.Activate(context.Background(), "flaky", ""); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	ctx := context.Background()
	calls := map[string]func() error{
		"Decide":      func() error { _, _, err := e.Decide(ctx, apiReq("x")); return err },
		"Add":         func() error { _, err := e.Add(ctx, scenarios.Rule{Status: 500}); return err },
		"Get":         func() error { _, err := e.Get(ctx, "r"); return err },
		"Remove":      func() error { return e.Remove(ctx, "r") },
		"Rules":       func() error { _, err := e.Rules(ctx); return err },
		"Clear":       func() error { return e.Clear(ctx) },
		"ClearClient": func() error { return e.ClearClient(ctx, "x") },
		"Activate":    func() error { _, err := e.Activate(ctx, "flaky", "y"); return err },
		"Deactivate":  func() error { return e.Deactivate(ctx, "flaky", "") },
		"Active":      func() error { _, err := e.Active(ctx); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, scenarios.ErrUnavailable) {
			t.Errorf("%s with Redis down: %v, want ErrUnavailable", name, err)
		}
	}
}

// TestSharedRefusedWritesAreUnavailable: a Redis that answers reads but
// refuses writes (out of memory, noeviction) makes every change fail with
// ErrUnavailable, and the rules stay as they were.
func TestSharedRefusedWritesAreUnavailable(t *testing.T) {
	es, srv := replicas(t, 1)
	e := es[0]
	ctx := context.Background()
	mustAdd(t, e, scenarios.Rule{ID: "r", Status: 500})
	allowWrites := redistest.RefuseWrites(t, srv.NewClient(t))
	for name, call := range map[string]func() error{
		"Add":      func() error { _, err := e.Add(ctx, scenarios.Rule{Status: 500}); return err },
		"Remove":   func() error { return e.Remove(ctx, "r") },
		"Clear":    func() error { return e.Clear(ctx) },
		"Activate": func() error { _, err := e.Activate(ctx, "flaky", ""); return err },
		"Decide":   func() error { _, _, err := e.Decide(ctx, apiReq("x")); return err },
	} {
		if err := call(); !errors.Is(err, scenarios.ErrUnavailable) {
			t.Errorf("%s with writes refused: %v, want ErrUnavailable", name, err)
		}
	}
	allowWrites()
	if st := mustRules(t, e); len(st) != 1 || st[0].ID != "r" || st[0].Matches != 0 {
		t.Errorf("rules after refused changes: %+v, want rule r untouched", st)
	}
}

// TestSharedCountsExactlyOnceWhenRedisStalls: Redis paused (or frozen) for
// longer than the client's read timeout while requests run. Every request
// still gets the decision made for it, a times: N rule forces exactly N
// answers, and every request counts one match.
func TestSharedCountsExactlyOnceWhenRedisStalls(t *testing.T) {
	// A request rides out a stall for four read timeouts; the stall lasts
	// two. The other two are slack for a loaded machine, where Redis and
	// the test share two cores: with 200 ms, one call in a ./test run at a
	// load average of 13 was still unanswered after 800 ms.
	const timeout = 500 * time.Millisecond
	tests := []struct {
		name string
		rule scenarios.Rule
	}{
		{"times", scenarios.Rule{Endpoint: scenarios.EndpointAPI, Status: 503, Times: 40}},
		{"after", scenarios.Rule{Endpoint: scenarios.EndpointAPI, Status: 503, After: 40}},
		{"perClient", scenarios.Rule{Endpoint: scenarios.EndpointAPI, Status: 503, After: 5, Times: 10, PerClient: true}},
	}
	// Each stall begins before the requests start, so that their first
	// scripts are sent into it, and ends after twice the read timeout:
	// longer than one call waits (go-redis gives up on some: a new
	// connection's handshake that times out is not retried), shorter than
	// the stall a request rides out. TestFireScriptOncePerCall pins what a
	// call sent twice does.
	stalls := []struct {
		name       string
		begin, end func(t *testing.T, srv *redistest.Server, admin *redis.Client)
	}{
		{"paused", func(t *testing.T, _ *redistest.Server, admin *redis.Client) {
			if err := admin.Do(context.Background(), "CLIENT", "PAUSE", strconv.Itoa(int(2*timeout/time.Millisecond)), "ALL").Err(); err != nil {
				t.Fatal(err)
			}
		}, func(*testing.T, *redistest.Server, *redis.Client) {}},
		{"frozen", func(t *testing.T, srv *redistest.Server, _ *redis.Client) { srv.Freeze(t) },
			func(t *testing.T, srv *redistest.Server, _ *redis.Client) {
				time.Sleep(2 * timeout) // the stall being simulated, not a wait for a signal
				srv.Thaw(t)
			}},
	}
	for _, tt := range tests {
		for _, st := range stalls {
			st := st
			t.Run(tt.name+"/"+st.name, func(t *testing.T) {
				srv := redistest.Start(t)
				opts, err := redis.ParseURL(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				opts.ReadTimeout, opts.WriteTimeout = timeout, timeout
				rdb := redis.NewClient(opts)
				t.Cleanup(func() { rdb.Close() })
				e := scenarios.NewRedis(rdb, "sandbox:", 0, testConfig(t))
				added := mustAdd(t, e, tt.rule)
				admin := srv.NewClient(t)

				const workers, perWorker = 20, 10
				var forced atomic.Int32
				// As the sandbox does, the requests carry the rules' version,
				// so their first Redis call is the script.
				ver, err := admin.Get(context.Background(), e.VersionKey()).Int64()
				if err != nil {
					t.Fatal(err)
				}
				ctx := scenarios.WithRulesVersion(context.Background(), ver)
				// A request no rule matches fills the replica's cache of the
				// rules at that version.
				if _, ok, err := e.Decide(ctx, scenarios.Request{Endpoint: scenarios.EndpointPing}); ok || err != nil {
					t.Fatalf("warming the cache: %v %v", ok, err)
				}
				st.begin(t, srv, admin)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for w := range workers {
					wg.Go(func() {
						<-start
						for range perWorker {
							d, ok, err := e.Decide(ctx, apiReq(fmt.Sprint("client-", w%2)))
							if err != nil {
								t.Errorf("Decide: %v", err)
								continue
							}
							if ok && d.Status == 503 {
								forced.Add(1)
							}
						}
					})
				}
				close(start)
				st.end(t, srv, admin)
				wg.Wait()
				sent := workers * perWorker
				want := map[string]int{"times": 40, "after": sent - 40, "perClient": 20}[tt.name]
				if got := int(forced.Load()); got != want {
					t.Errorf("%d forced answers, want exactly %d", got, want)
				}
				if st, err := e.Get(context.Background(), added.ID); err == nil && st.Matches != sent {
					t.Errorf("matches = %d, want %d (one per request)", st.Matches, sent)
				}
			})
		}
	}
}
