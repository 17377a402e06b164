package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios/savedtest"
)

func TestMemorySavedConformance(t *testing.T) {
	savedtest.Run(t, func(*testing.T) scenarios.SavedStore { return scenarios.NewMemorySaved() })
}

// TestRedisSavedConformance runs the suite on one private Redis, each
// subtest under a prefix of its own.
func TestRedisSavedConformance(t *testing.T) {
	rdb := redistest.Start(t).NewClient(t)
	n := 0
	savedtest.Run(t, func(*testing.T) scenarios.SavedStore {
		n++
		return scenarios.NewRedisSaved(rdb, fmt.Sprintf("saved-%d:", n))
	})
}

// TestRedisClusterSavedConformance runs the suite on a 3-master Redis
// Cluster, each subtest under its own hash-tagged prefix, as
// --redis-cluster lays keys.
func TestRedisClusterSavedConformance(t *testing.T) {
	rdb := redistest.StartCluster(t, 3, 0).NewClient(t)
	prefix := redistest.Prefixes("saved")
	savedtest.Run(t, func(*testing.T) scenarios.SavedStore { return scenarios.NewRedisSaved(rdb, prefix()) })
}

// TestSavedAcrossReplicas: two libraries and engines on one Redis, as two
// replicas: a scenario saved through one is known to the other at once,
// by name, in its list, per request and for activation.
func TestSavedAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	var libs [2]*scenarios.Library
	var engines [2]*scenarios.RedisEngine
	for i := range libs {
		cfg := testConfig(t)
		rdb := srv.NewClient(t)
		cfg.Library.UseSaved(scenarios.NewRedisSaved(rdb, "sandbox:"))
		libs[i], engines[i] = cfg.Library, scenarios.NewRedis(rdb, "sandbox:", 0, cfg)
	}
	sc := scenarios.Scenario{Name: "team-outage", Description: "Our outage.", Rules: []scenarios.Rule{{Endpoint: scenarios.EndpointAPI, Status: 503}}}
	if _, err := libs[0].Save(ctx, sc); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := libs[1].Get(ctx, "team-outage"); !ok || err != nil {
		t.Fatalf("the other replica's Get: %v, %v", ok, err)
	}
	if names, err := libs[1].Names(ctx); err != nil || !slices.Contains(names, "team-outage") || !slices.Contains(names, "flaky") {
		t.Errorf("the other replica's names: %v, %v", names, err)
	}
	if d, ok, err := engines[1].DecideScenario(ctx, "team-outage", apiReq("c")); err != nil || !ok || d.Status != 503 {
		t.Errorf("the other replica's per-request decision: %+v, %v, %v", d, ok, err)
	}
	if _, err := engines[1].Activate(ctx, "team-outage", "c"); err != nil {
		t.Fatalf("activate through the other replica: %v", err)
	}
	if d, ok, err := engines[0].Decide(ctx, apiReq("c")); err != nil || !ok || d.Status != 503 {
		t.Errorf("the activation's rule through the first: %+v, %v, %v", d, ok, err)
	}
	if _, err := libs[1].Save(ctx, sc); !errors.Is(err, scenarios.ErrScenarioExists) {
		t.Errorf("the name again through the other replica: %v, want ErrScenarioExists", err)
	}
	if _, err := libs[1].Save(ctx, scenarios.Scenario{Name: "flaky", Description: "d", Rules: sc.Rules}); !errors.Is(err, scenarios.ErrScenarioExists) {
		t.Errorf("an embedded scenario's name: %v, want ErrScenarioExists", err)
	}
}

// TestRedisSavedUnavailable: with Redis gone, every read and save of the
// saved scenarios, and every lookup through the library and the engine
// of a name not built in, is an error wrapping ErrUnavailable: never
// "not found", an empty list or "saved".
func TestRedisSavedUnavailable(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.NewClient(t)
	saved := scenarios.NewRedisSaved(rdb, "sandbox:")
	cfg := testConfig(t)
	cfg.Library.UseSaved(saved)
	engine := scenarios.NewRedis(rdb, "sandbox:", 0, cfg)
	srv.Stop(t)
	sc := scenarios.Scenario{Name: "team-outage", Description: "Our outage.", Rules: []scenarios.Rule{{Endpoint: scenarios.EndpointAPI, Status: 503}}}
	_, _, getErr := cfg.Library.Get(ctx, "team-outage")
	_, listErr := cfg.Library.Scenarios(ctx)
	_, saveErr := cfg.Library.Save(ctx, sc)
	_, _, decideErr := engine.DecideScenario(ctx, "team-outage", apiReq("c"))
	_, activateErr := engine.Activate(ctx, "team-outage", "")
	for what, err := range map[string]error{"Get": getErr, "Scenarios": listErr, "Save": saveErr, "DecideScenario": decideErr, "Activate": activateErr} {
		if !errors.Is(err, scenarios.ErrUnavailable) {
			t.Errorf("%s with Redis down: %v, want ErrUnavailable", what, err)
		}
	}
	if _, ok, err := cfg.Library.Get(ctx, "flaky"); !ok || err != nil {
		t.Errorf("a built-in scenario with Redis down: %v, %v; want it from the process", ok, err)
	}
}

// TestRedisSavedMalformed: a stored value that does not decode fails the
// read rather than vanishing from it.
func TestRedisSavedMalformed(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).NewClient(t)
	if err := rdb.HSet(ctx, "sandbox:library:saved", "broken", "{").Err(); err != nil {
		t.Fatal(err)
	}
	saved := scenarios.NewRedisSaved(rdb, "sandbox:")
	if _, _, err := saved.Get(ctx, "broken"); !errors.Is(err, scenarios.ErrUnavailable) {
		t.Errorf("Get: %v, want ErrUnavailable", err)
	}
	if _, err := saved.List(ctx); !errors.Is(err, scenarios.ErrUnavailable) {
		t.Errorf("List: %v, want ErrUnavailable", err)
	}
}
