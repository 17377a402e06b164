package scenarios

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDecide100Rules is the cost every token, API and ping request pays
// with 100 active rules, none of which matches (the worst case: all are
// tried).
func BenchmarkDecide100Rules(b *testing.B) {
	e := New(Config{})
	for i := range 100 {
		if _, err := e.Add(context.Background(), Rule{Endpoint: EndpointAPI, Path: fmt.Sprintf("/api/v1/referrals/other-%d/*", i), Status: 503}); err != nil {
			b.Fatal(err)
		}
	}
	req := Request{Method: "GET", Path: "/api/v1/referrals/trials", ClientID: "sandbox-partner", Endpoint: EndpointAPI}
	for b.Loop() {
		if _, ok, _ := e.Decide(context.Background(), req); ok {
			b.Fatal("a rule matched")
		}
	}
}

// BenchmarkDecideHostilePath is a 60 KB request path of 30,000 segments
// against n never-firing rules of 300 segments each, one of which agrees
// with the path's first 300 segments: the cost stays flat as n grows,
// since the index walks only the patterns that agree with the path so far,
// and never runs under the engine's lock.
func BenchmarkDecideHostilePath(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			e := New(Config{MaxRules: n})
			for i := range n {
				path := fmt.Sprintf("/never/%d", i) + strings.Repeat("/*", 298)
				if _, err := e.Add(context.Background(), Rule{Endpoint: EndpointAPI, Path: path, Status: 503}); err != nil {
					b.Fatal(err)
				}
			}
			req := Request{Method: "GET", Path: "/never/5" + strings.Repeat("/a", 29998), ClientID: "sandbox-partner", Endpoint: EndpointAPI}
			e.Decide(context.Background(), req) // builds the index, once per change of rules
			for b.Loop() {
				if _, ok, _ := e.Decide(context.Background(), req); ok {
					b.Fatal("a rule matched")
				}
			}
		})
	}
}
