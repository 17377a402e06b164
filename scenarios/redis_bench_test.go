package scenarios_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// sharedBenchEngine is a shared engine on a private Redis holding n rules
// that do not match the benchmark's request.
func sharedBenchEngine(b *testing.B, n int) *scenarios.RedisEngine {
	b.Helper()
	e := scenarios.NewRedis(redistest.Start(b).NewClient(b), "sandbox:", 0, scenarios.Config{})
	for i := range n {
		if _, err := e.Add(context.Background(), scenarios.Rule{Endpoint: scenarios.EndpointAPI, Path: fmt.Sprintf("/api/v1/referrals/other-%d/*", i), Status: 503}); err != nil {
			b.Fatal(err)
		}
	}
	return e
}

// BenchmarkSharedDecideNoRules is what every request pays in shared mode
// with no rule active: one GET of the version.
func BenchmarkSharedDecideNoRules(b *testing.B) { benchSharedNoMatch(b, 0) }

// BenchmarkSharedDecide100Rules: 100 cached rules, none matching; still one
// GET, plus the in-process matching.
func BenchmarkSharedDecide100Rules(b *testing.B) { benchSharedNoMatch(b, 100) }

// benchSharedNoMatch decides a request that none of n rules matches.
func benchSharedNoMatch(b *testing.B, n int) {
	e := sharedBenchEngine(b, n)
	req := apiReq("sandbox-partner")
	for b.Loop() {
		if _, ok, err := e.Decide(context.Background(), req); ok || err != nil {
			b.Fatal("a rule fired", err)
		}
	}
}

// BenchmarkSharedDecideFiring: one matching unlimited rule, the GET plus one
// script call per request.
func BenchmarkSharedDecideFiring(b *testing.B) {
	e := sharedBenchEngine(b, 0)
	if _, err := e.Add(context.Background(), scenarios.Rule{Endpoint: scenarios.EndpointAPI, Status: 503}); err != nil {
		b.Fatal(err)
	}
	req := apiReq("sandbox-partner")
	for b.Loop() {
		if _, ok, err := e.Decide(context.Background(), req); !ok || err != nil {
			b.Fatal("the rule did not fire", err)
		}
	}
}

// BenchmarkSharedAddRemoveWith500Rules is an admin change with 500 rules
// active: the whole list is read and rewritten.
func BenchmarkSharedAddRemoveWith500Rules(b *testing.B) {
	e := sharedBenchEngine(b, 500)
	ctx := context.Background()
	for b.Loop() {
		r, err := e.Add(ctx, scenarios.Rule{Status: 500})
		if err == nil {
			err = e.Remove(ctx, r.ID)
		}
		if err != nil {
			b.Fatalf("add/remove: %v", err)
		}
	}
}
