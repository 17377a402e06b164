package scenarios

import (
	"context"
	"testing"
)

func TestClearClientLeavesOtherClientsRules(t *testing.T) {
	forEachEngine(t, testClearClientLeavesOtherClientsRules)
}

func testClearClientLeavesOtherClientsRules(t *testing.T, newEngine func(*testing.T) *Engine) {
	e := newEngine(t)
	for _, r := range []Rule{
		{Endpoint: EndpointAPI, Status: 503, ClientID: "a"},
		{Endpoint: EndpointAPI, Status: 500, ClientID: "b"},
		{Endpoint: EndpointAPI, Status: 429, PerClient: true, Times: 1},
	} {
		if _, err := e.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	flaky, err := e.Activate("flaky", "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Activate("flaky", "b"); err != nil {
		t.Fatal(err)
	}
	before := len(e.Rules())
	e.ClearClient("a")
	if got, want := len(e.Rules()), before-1-len(flaky); got != want {
		t.Errorf("%d rules left, want %d (a's own rule and its flaky rules gone)", got, want)
	}
	if act := e.Active(); len(act) != 1 || act[0].ClientID != "b" {
		t.Errorf("activations left: %+v, want only b's", act)
	}
	if d, ok := e.Decide(context.Background(), Request{Endpoint: EndpointAPI, ClientID: "b"}); !ok || d.Status == 503 {
		t.Errorf("b's decision %+v, %t: b's rules must stand", d, ok)
	}
}
