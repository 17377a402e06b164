package scenarios

import (
	"context"
	"fmt"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// sharedBenchEngine is a shared engine on a private Redis holding n rules
// that do not match the benchmark's request.
func sharedBenchEngine(b *testing.B, n int) *Engine {
	b.Helper()
	e, err := New(Config{}).Shared(redistest.Start(b).NewClient(b), "sandbox:", 0)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if _, err := e.Add(Rule{Endpoint: EndpointAPI, Path: fmt.Sprintf("/api/v1/referrals/other-%d/*", i), Status: 503}); err != nil {
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
		if _, ok := e.Decide(context.Background(), req); ok {
			b.Fatal("a rule fired")
		}
	}
}

// BenchmarkSharedDecideFiring: one matching unlimited rule, the GET plus one
// script call per request.
func BenchmarkSharedDecideFiring(b *testing.B) {
	e := sharedBenchEngine(b, 0)
	if _, err := e.Add(Rule{Endpoint: EndpointAPI, Status: 503}); err != nil {
		b.Fatal(err)
	}
	req := apiReq("sandbox-partner")
	for b.Loop() {
		if _, ok := e.Decide(context.Background(), req); !ok {
			b.Fatal("the rule did not fire")
		}
	}
}

// BenchmarkSharedAddRemoveWith500Rules is an admin change with 500 rules
// active: the whole list is read and rewritten.
func BenchmarkSharedAddRemoveWith500Rules(b *testing.B) {
	e := sharedBenchEngine(b, 500)
	for b.Loop() {
		r, err := e.Add(Rule{Status: 500})
		if err != nil || !e.Remove(r.ID) {
			b.Fatalf("add/remove: %v", err)
		}
	}
}
