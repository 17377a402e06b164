package rulestest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

func testTimesExactUnderConcurrency(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	mustAdd(t, e, scenarios.Rule{Endpoint: scenarios.EndpointAPI, Status: 503, Times: 3})
	var forced atomic.Int32
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			d, ok, err := e.Decide(context.Background(), apiReq(fmt.Sprint("c", i%5)))
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
		t.Fatalf("%d requests forced, want exactly 3", got)
	}
	if rules := rules(t, e); len(rules) != 0 {
		t.Errorf("rule not retired after its times: %+v", rules)
	}
}

func testCounting(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	same := func(int) scenarios.Request { return apiReq("a") }
	twoClients := func(i int) scenarios.Request { return apiReq([]string{"a", "b"}[i/3]) } // a a a b b b
	tests := []struct {
		name string
		rule scenarios.Rule
		req  func(int) scenarios.Request
		n    int
		want []bool
	}{
		{"unlimited", scenarios.Rule{Status: 503}, same, 3, []bool{true, true, true}},
		{"times 2", scenarios.Rule{Status: 503, Times: 2}, same, 4, []bool{true, true, false, false}},
		{"after 2", scenarios.Rule{Status: 503, After: 2}, same, 5, []bool{false, false, true, true, true}},
		{"after 1 times 2", scenarios.Rule{Status: 503, After: 1, Times: 2}, same, 5, []bool{false, true, true, false, false}},
		{"perClient times 1", scenarios.Rule{Status: 401, Times: 1, PerClient: true}, twoClients, 6, []bool{true, false, false, true, false, false}},
		{"perClient after 1", scenarios.Rule{Status: 401, After: 1, PerClient: true}, twoClients, 6, []bool{false, true, true, false, true, true}},
		{"shared times across clients", scenarios.Rule{Status: 401, Times: 1}, twoClients, 6, []bool{true, false, false, false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t)
			mustAdd(t, e, tt.rule)
			got := decisions(t, e, tt.n, tt.req)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("fired %v, want %v", got, tt.want)
			}
		})
	}
}

func testPerClientTimesConcurrent(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	mustAdd(t, e, scenarios.Rule{Endpoint: scenarios.EndpointAPI, Status: 401, Reason: "expired", Times: 1, PerClient: true})
	var mu sync.Mutex
	perClient := map[string]int{}
	var wg sync.WaitGroup
	for i := range 60 {
		client := fmt.Sprint("client-", i%6)
		wg.Go(func() {
			d, ok, err := e.Decide(context.Background(), apiReq(client))
			if err != nil {
				t.Errorf("Decide: %v", err)
			}
			if ok {
				mu.Lock()
				perClient[client]++
				mu.Unlock()
				if d.Status != 401 || d.Reason != "expired" {
					t.Errorf("decision %+v", d)
				}
			}
		})
	}
	wg.Wait()
	if len(perClient) != 6 {
		t.Fatalf("fired for %d clients, want 6: %v", len(perClient), perClient)
	}
	for c, n := range perClient {
		if n != 1 {
			t.Errorf("client %s forced %d times, want 1", c, n)
		}
	}
	rules := rules(t, e)
	if len(rules) != 1 || rules[0].Hits != 6 || rules[0].Matches != 60 || rules[0].ClientHits["client-3"] != 1 || rules[0].Remaining != nil {
		t.Errorf("status %+v", rules)
	}
}

func testSeededProbability(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	run := func(seed uint64) []bool {
		e := newEngine(t)
		mustAdd(t, e, scenarios.Rule{Status: 503, Probability: 0.3, Seed: seed})
		return decisions(t, e, 2000, func(int) scenarios.Request { return apiReq("a") })
	}
	first, second := run(42), run(42)
	if fmt.Sprint(first) != fmt.Sprint(second) {
		t.Fatal("the same seed gave different sequences")
	}
	if fmt.Sprint(first) == fmt.Sprint(run(43)) {
		t.Error("different seeds gave the same sequence")
	}
	fired := 0
	for _, f := range first {
		if f {
			fired++
		}
	}
	if fired < 500 || fired > 700 {
		t.Errorf("fired %d of 2000 at probability 0.3", fired)
	}
}

func testSeededDelaysReplay(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	run := func() []time.Duration {
		e := newEngine(t)
		mustAdd(t, e, scenarios.Rule{Delay: &scenarios.Delay{Median: scenarios.Duration(100 * time.Millisecond), Sigma: 1}, Seed: 5})
		var out []time.Duration
		for range 50 {
			d, _ := decide(t, e, apiReq("a"))
			out = append(out, d.Delay)
		}
		return out
	}
	a, b := run(), run()
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("delays differ between runs:\n%v\n%v", a, b)
	}
	if a[0] == a[1] && a[1] == a[2] {
		t.Errorf("lognormal delays do not vary: %v", a[:3])
	}
}

func testClientBoundRule(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	mustAdd(t, e, scenarios.Rule{ClientID: "ci-job-1", Status: 503, Times: 2})
	for range 5 {
		if d, ok := decide(t, e, apiReq("ci-job-2")); ok {
			t.Fatalf("other client got %+v", d)
		}
	}
	got := decisions(t, e, 3, func(int) scenarios.Request { return apiReq("ci-job-1") })
	if fmt.Sprint(got) != "[true true false]" {
		t.Errorf("bound client fired %v, want [true true false]", got)
	}
}

func testFirstFiringRuleWins(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	skip := mustAdd(t, e, scenarios.Rule{Status: 500, After: 1})
	delay := mustAdd(t, e, scenarios.Rule{Delay: &scenarios.Delay{Fixed: scenarios.Duration(10 * time.Millisecond)}, Times: 1})
	status := mustAdd(t, e, scenarios.Rule{Status: 503})
	var got []string
	for range 4 {
		d, ok := decide(t, e, apiReq("a"))
		if !ok {
			t.Fatal("no rule fired")
		}
		got = append(got, d.RuleID)
	}
	// scenarios.Request 1: rule 1 matches but lets it through (after), rule 2 fires
	// and retires. Then rule 1 fires every time.
	want := []string{delay.ID, skip.ID, skip.ID, skip.ID}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("fired %v, want %v", got, want)
	}
	if _, err := e.Get(context.Background(), status.ID); err != nil {
		t.Error("unfired rule is gone")
	}
}

func testDecisionFields(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	tests := []struct {
		name string
		rule scenarios.Rule
		req  scenarios.Request
		want scenarios.Decision
	}{
		{"503 default retry", scenarios.Rule{ID: "r", Status: 503}, apiReq("a"), scenarios.Decision{RuleID: "r", Status: 503, RetryAfter: time.Second}},
		{"429 retry", scenarios.Rule{ID: "r", Status: 429, RetryAfterSeconds: 7}, apiReq("a"), scenarios.Decision{RuleID: "r", Status: 429, RetryAfter: 7 * time.Second}},
		{"401 reason", scenarios.Rule{ID: "r", Status: 401, Reason: "expired"}, apiReq("a"), scenarios.Decision{RuleID: "r", Status: 401, Reason: "expired"}},
		{"token error", scenarios.Rule{ID: "r", Endpoint: scenarios.EndpointToken, Error: scenarios.ErrorInvalidClient}, scenarios.Request{Endpoint: scenarios.EndpointToken}, scenarios.Decision{RuleID: "r", Status: 401, Error: scenarios.ErrorInvalidClient}},
		{"token grant", scenarios.Rule{ID: "r", Endpoint: scenarios.EndpointToken, Error: scenarios.ErrorInvalidGrant}, scenarios.Request{Endpoint: scenarios.EndpointToken}, scenarios.Decision{RuleID: "r", Status: 400, Error: scenarios.ErrorInvalidGrant}},
		{"fault and delay", scenarios.Rule{ID: "r", Fault: scenarios.FaultEmpty, Delay: &scenarios.Delay{Fixed: scenarios.Duration(time.Second)}}, apiReq("a"), scenarios.Decision{RuleID: "r", Fault: scenarios.FaultEmpty, Delay: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t)
			mustAdd(t, e, tt.rule)
			got, ok := decide(t, e, tt.req)
			if !ok || got != tt.want {
				t.Errorf("Decide = %+v, %v; want %+v", got, ok, tt.want)
			}
		})
	}
}

func testRuleManagement(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	a := mustAdd(t, e, scenarios.Rule{Status: 503, Scenario: "sneaky"})
	if a.ID != "rule-1" || a.Scenario != "" {
		t.Errorf("added %+v, want id rule-1 and no scenario", a)
	}
	b := mustAdd(t, e, scenarios.Rule{ID: "mine", Status: 500, Times: 2})
	if _, err := e.Add(context.Background(), scenarios.Rule{ID: "mine", Status: 500}); !errors.Is(err, scenarios.ErrDuplicateID) {
		t.Errorf("duplicate id: err = %v", err)
	}
	var fe *scenarios.FieldError
	if _, err := e.Add(context.Background(), scenarios.Rule{Status: 418}); !errors.As(err, &fe) || fe.Field != "status" {
		t.Errorf("invalid rule: err = %v", err)
	}
	st, err := e.Get(context.Background(), b.ID)
	if err != nil || st.Remaining == nil || *st.Remaining != 2 || !st.AddedAt.Equal(testNow) || st.LastFiredAt != nil {
		t.Errorf("Get(%q) = %+v, %v", b.ID, st, err)
	}
	if got := len(rules(t, e)); got != 2 {
		t.Errorf("%d rules, want 2", got)
	}
	if err := e.Remove(context.Background(), a.ID); err != nil {
		t.Errorf("Remove: %v", err)
	}
	if err := e.Remove(context.Background(), a.ID); !errors.Is(err, scenarios.ErrNotFound) {
		t.Errorf("Remove again: %v, want ErrNotFound", err)
	}
	if d, _ := decide(t, e, apiReq("x")); d.RuleID != b.ID {
		t.Errorf("decided by %q, want %q", d.RuleID, b.ID)
	}
	if st, _ := e.Get(context.Background(), b.ID); st.Hits != 1 || *st.Remaining != 1 || st.LastFiredAt == nil {
		t.Errorf("after one hit: %+v", st)
	}
	decide(t, e, apiReq("x"))
	if _, err := e.Get(context.Background(), b.ID); !errors.Is(err, scenarios.ErrNotFound) {
		t.Error("retired rule still found")
	}
	mustAdd(t, e, scenarios.Rule{Status: 503})
	if err := e.Clear(context.Background()); err != nil {
		t.Fatalf("Clear: %v", err)
	}
	if len(rules(t, e)) != 0 {
		t.Error("Clear left rules")
	}
	if _, ok := decide(t, e, apiReq("x")); ok {
		t.Error("decision after Clear")
	}
}

func testAddCopiesDelay(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	r := scenarios.Rule{Delay: &scenarios.Delay{Fixed: scenarios.Duration(time.Second)}}
	mustAdd(t, e, r)
	r.Delay.Fixed = scenarios.Duration(time.Hour)
	if d, _ := decide(t, e, apiReq("a")); d.Delay != time.Second {
		t.Errorf("caller's change leaked into the engine: delay %v", d.Delay)
	}
}

// testPerClientUnregisteredIDsShareOneCounter: made-up client ids (a token
// request may name any) still match rules, but share one per-client counter,
// so a thousand ids add one entry to clientHits, not a thousand.
func testPerClientUnregisteredIDsShareOneCounter(t *testing.T, newEngine func(*testing.T) scenarios.Engine) {
	e := newEngine(t)
	added := mustAdd(t, e, scenarios.Rule{Endpoint: scenarios.EndpointToken, Status: 503, Times: 1, PerClient: true})
	tokenReq := func(client string, unregistered bool) scenarios.Request {
		return scenarios.Request{Method: "POST", Path: "/oauth2/v2.0/token", ClientID: client, Endpoint: scenarios.EndpointToken, Unregistered: unregistered}
	}
	fired := 0
	for i := range 1000 {
		if _, ok := decide(t, e, tokenReq(fmt.Sprint("made-up-", i), true)); ok {
			fired++
		}
	}
	if fired != 1 {
		t.Errorf("the rule fired %d times for 1000 unregistered ids, want once (one shared counter)", fired)
	}
	if _, ok := decide(t, e, tokenReq("sandbox-partner", false)); !ok {
		t.Error("a registered client did not get its own count")
	}
	st, _ := e.Get(context.Background(), added.ID)
	want := map[string]int{scenarios.UnregisteredClients: 1, "sandbox-partner": 1}
	if len(st.ClientHits) != len(want) || fmt.Sprint(st.ClientHits) != fmt.Sprint(want) {
		t.Errorf("clientHits has %d keys, want %v", len(st.ClientHits), want)
	}
	// A rule naming an unregistered id still matches it.
	named := mustAdd(t, e, scenarios.Rule{Endpoint: scenarios.EndpointToken, ClientID: "made-up-x", Status: 503})
	if d, ok := decide(t, e, tokenReq("made-up-x", true)); !ok || d.RuleID != named.ID {
		t.Errorf("rule bound to an unregistered id: %+v %v, want it to fire", d, ok)
	}
}
