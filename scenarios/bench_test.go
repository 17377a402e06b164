package scenarios

import (
	"context"
	"fmt"
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
