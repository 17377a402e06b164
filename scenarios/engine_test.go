package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

var testNow = time.Date(2025, 11, 3, 9, 30, 0, 0, time.UTC)

// newTestEngine returns an engine over the embedded library and a fixed clock.
func newTestEngine(t *testing.T) *Engine {
	t.Helper()
	lib, err := LoadLibrary()
	if err != nil {
		t.Fatalf("LoadLibrary: %v", err)
	}
	return New(Config{Library: lib, Clock: clock.Func(func() time.Time { return testNow })})
}

// mustAdd adds r or fails the test.
func mustAdd(t *testing.T, e *Engine, r Rule) Rule {
	t.Helper()
	added, err := e.Add(r)
	if err != nil {
		t.Fatalf("Add(%+v): %v", r, err)
	}
	return added
}

func apiReq(client string) Request {
	return Request{Method: "GET", Path: "/api/v1/referrals/trials", ClientID: client, Endpoint: EndpointAPI}
}

func TestTimesExactUnderConcurrency(t *testing.T) { forEachEngine(t, testTimesExactUnderConcurrency) }

func testTimesExactUnderConcurrency(t *testing.T, newEngine func(*testing.T) *Engine) {
	e := newEngine(t)
	mustAdd(t, e, Rule{Endpoint: EndpointAPI, Status: 503, Times: 3})
	var forced atomic.Int32
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			if d, ok := e.Decide(context.Background(), apiReq(fmt.Sprint("c", i%5))); ok && d.Status == 503 {
				forced.Add(1)
			}
		})
	}
	wg.Wait()
	if got := forced.Load(); got != 3 {
		t.Fatalf("%d requests forced, want exactly 3", got)
	}
	if rules := e.Rules(); len(rules) != 0 {
		t.Errorf("rule not retired after its times: %+v", rules)
	}
}

// decisions runs n requests through e and reports which ones a rule fired on.
func decisions(e *Engine, n int, req func(i int) Request) []bool {
	out := make([]bool, n)
	for i := range out {
		_, out[i] = e.Decide(context.Background(), req(i))
	}
	return out
}

func TestCounting(t *testing.T) { forEachEngine(t, testCounting) }

func testCounting(t *testing.T, newEngine func(*testing.T) *Engine) {
	same := func(int) Request { return apiReq("a") }
	twoClients := func(i int) Request { return apiReq([]string{"a", "b"}[i/3]) } // a a a b b b
	tests := []struct {
		name string
		rule Rule
		req  func(int) Request
		n    int
		want []bool
	}{
		{"unlimited", Rule{Status: 503}, same, 3, []bool{true, true, true}},
		{"times 2", Rule{Status: 503, Times: 2}, same, 4, []bool{true, true, false, false}},
		{"after 2", Rule{Status: 503, After: 2}, same, 5, []bool{false, false, true, true, true}},
		{"after 1 times 2", Rule{Status: 503, After: 1, Times: 2}, same, 5, []bool{false, true, true, false, false}},
		{"perClient times 1", Rule{Status: 401, Times: 1, PerClient: true}, twoClients, 6, []bool{true, false, false, true, false, false}},
		{"perClient after 1", Rule{Status: 401, After: 1, PerClient: true}, twoClients, 6, []bool{false, true, true, false, true, true}},
		{"shared times across clients", Rule{Status: 401, Times: 1}, twoClients, 6, []bool{true, false, false, false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t)
			mustAdd(t, e, tt.rule)
			got := decisions(e, tt.n, tt.req)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("fired %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPerClientTimesConcurrent(t *testing.T) { forEachEngine(t, testPerClientTimesConcurrent) }

func testPerClientTimesConcurrent(t *testing.T, newEngine func(*testing.T) *Engine) {
	e := newEngine(t)
	mustAdd(t, e, Rule{Endpoint: EndpointAPI, Status: 401, Reason: "expired", Times: 1, PerClient: true})
	var mu sync.Mutex
	perClient := map[string]int{}
	var wg sync.WaitGroup
	for i := range 60 {
		client := fmt.Sprint("client-", i%6)
		wg.Go(func() {
			if d, ok := e.Decide(context.Background(), apiReq(client)); ok {
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
	rules := e.Rules()
	if len(rules) != 1 || rules[0].Hits != 6 || rules[0].Matches != 60 || rules[0].ClientHits["client-3"] != 1 || rules[0].Remaining != nil {
		t.Errorf("status %+v", rules)
	}
}

func TestSeededProbability(t *testing.T) { forEachEngine(t, testSeededProbability) }

func testSeededProbability(t *testing.T, newEngine func(*testing.T) *Engine) {
	run := func(seed uint64) []bool {
		e := newEngine(t)
		mustAdd(t, e, Rule{Status: 503, Probability: 0.3, Seed: seed})
		return decisions(e, 2000, func(int) Request { return apiReq("a") })
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

func TestSeededDelaysReplay(t *testing.T) { forEachEngine(t, testSeededDelaysReplay) }

func testSeededDelaysReplay(t *testing.T, newEngine func(*testing.T) *Engine) {
	run := func() []time.Duration {
		e := newEngine(t)
		mustAdd(t, e, Rule{Delay: &Delay{Median: Duration(100 * time.Millisecond), Sigma: 1}, Seed: 5})
		var out []time.Duration
		for range 50 {
			d, _ := e.Decide(context.Background(), apiReq("a"))
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

func TestClientBoundRule(t *testing.T) { forEachEngine(t, testClientBoundRule) }

func testClientBoundRule(t *testing.T, newEngine func(*testing.T) *Engine) {
	e := newEngine(t)
	mustAdd(t, e, Rule{ClientID: "ci-job-1", Status: 503, Times: 2})
	for range 5 {
		if d, ok := e.Decide(context.Background(), apiReq("ci-job-2")); ok {
			t.Fatalf("other client got %+v", d)
		}
	}
	got := decisions(e, 3, func(int) Request { return apiReq("ci-job-1") })
	if fmt.Sprint(got) != "[true true false]" {
		t.Errorf("bound client fired %v, want [true true false]", got)
	}
}

func TestFirstFiringRuleWins(t *testing.T) { forEachEngine(t, testFirstFiringRuleWins) }

func testFirstFiringRuleWins(t *testing.T, newEngine func(*testing.T) *Engine) {
	e := newEngine(t)
	skip := mustAdd(t, e, Rule{Status: 500, After: 1})
	delay := mustAdd(t, e, Rule{Delay: &Delay{Fixed: Duration(10 * time.Millisecond)}, Times: 1})
	status := mustAdd(t, e, Rule{Status: 503})
	var got []string
	for range 4 {
		d, ok := e.Decide(context.Background(), apiReq("a"))
		if !ok {
			t.Fatal("no rule fired")
		}
		got = append(got, d.RuleID)
	}
	// Request 1: rule 1 matches but lets it through (after), rule 2 fires
	// and retires. Then rule 1 fires every time.
	want := []string{delay.ID, skip.ID, skip.ID, skip.ID}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("fired %v, want %v", got, want)
	}
	if _, ok := e.Get(status.ID); !ok {
		t.Error("unfired rule is gone")
	}
}

func TestDecisionFields(t *testing.T) { forEachEngine(t, testDecisionFields) }

func testDecisionFields(t *testing.T, newEngine func(*testing.T) *Engine) {
	tests := []struct {
		name string
		rule Rule
		req  Request
		want Decision
	}{
		{"503 default retry", Rule{ID: "r", Status: 503}, apiReq("a"), Decision{RuleID: "r", Status: 503, RetryAfter: time.Second}},
		{"429 retry", Rule{ID: "r", Status: 429, RetryAfterSeconds: 7}, apiReq("a"), Decision{RuleID: "r", Status: 429, RetryAfter: 7 * time.Second}},
		{"401 reason", Rule{ID: "r", Status: 401, Reason: "expired"}, apiReq("a"), Decision{RuleID: "r", Status: 401, Reason: "expired"}},
		{"token error", Rule{ID: "r", Endpoint: EndpointToken, Error: ErrorInvalidClient}, Request{Endpoint: EndpointToken}, Decision{RuleID: "r", Status: 401, Error: ErrorInvalidClient}},
		{"token grant", Rule{ID: "r", Endpoint: EndpointToken, Error: ErrorInvalidGrant}, Request{Endpoint: EndpointToken}, Decision{RuleID: "r", Status: 400, Error: ErrorInvalidGrant}},
		{"fault and delay", Rule{ID: "r", Fault: FaultEmpty, Delay: &Delay{Fixed: Duration(time.Second)}}, apiReq("a"), Decision{RuleID: "r", Fault: FaultEmpty, Delay: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t)
			mustAdd(t, e, tt.rule)
			got, ok := e.Decide(context.Background(), tt.req)
			if !ok || got != tt.want {
				t.Errorf("Decide = %+v, %v; want %+v", got, ok, tt.want)
			}
		})
	}
}

func TestRuleManagement(t *testing.T) { forEachEngine(t, testRuleManagement) }

func testRuleManagement(t *testing.T, newEngine func(*testing.T) *Engine) {
	e := newEngine(t)
	a := mustAdd(t, e, Rule{Status: 503, Scenario: "sneaky"})
	if a.ID != "rule-1" || a.Scenario != "" {
		t.Errorf("added %+v, want id rule-1 and no scenario", a)
	}
	b := mustAdd(t, e, Rule{ID: "mine", Status: 500, Times: 2})
	if _, err := e.Add(Rule{ID: "mine", Status: 500}); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("duplicate id: err = %v", err)
	}
	var fe *FieldError
	if _, err := e.Add(Rule{Status: 418}); !errors.As(err, &fe) || fe.Field != "status" {
		t.Errorf("invalid rule: err = %v", err)
	}
	st, ok := e.Get(b.ID)
	if !ok || st.Remaining == nil || *st.Remaining != 2 || !st.AddedAt.Equal(testNow) || st.LastFiredAt != nil {
		t.Errorf("Get(%q) = %+v, %v", b.ID, st, ok)
	}
	if got := len(e.Rules()); got != 2 {
		t.Errorf("%d rules, want 2", got)
	}
	if !e.Remove(a.ID) || e.Remove(a.ID) {
		t.Error("Remove should succeed once")
	}
	if d, _ := e.Decide(context.Background(), apiReq("x")); d.RuleID != b.ID {
		t.Errorf("decided by %q, want %q", d.RuleID, b.ID)
	}
	if st, _ := e.Get(b.ID); st.Hits != 1 || *st.Remaining != 1 || st.LastFiredAt == nil {
		t.Errorf("after one hit: %+v", st)
	}
	e.Decide(context.Background(), apiReq("x"))
	if _, ok := e.Get(b.ID); ok {
		t.Error("retired rule still found")
	}
	mustAdd(t, e, Rule{Status: 503})
	e.Clear()
	if len(e.Rules()) != 0 {
		t.Error("Clear left rules")
	}
	if _, ok := e.Decide(context.Background(), apiReq("x")); ok {
		t.Error("decision after Clear")
	}
}

func TestAddCopiesDelay(t *testing.T) { forEachEngine(t, testAddCopiesDelay) }

func testAddCopiesDelay(t *testing.T, newEngine func(*testing.T) *Engine) {
	e := newEngine(t)
	r := Rule{Delay: &Delay{Fixed: Duration(time.Second)}}
	mustAdd(t, e, r)
	r.Delay.Fixed = Duration(time.Hour)
	if d, _ := e.Decide(context.Background(), apiReq("a")); d.Delay != time.Second {
		t.Errorf("caller's change leaked into the engine: delay %v", d.Delay)
	}
}

func TestCustomIDGenerator(t *testing.T) {
	e := New(Config{NewID: func() string { return "same" }})
	mustAdd(t, e, Rule{Status: 503})
	if _, err := e.Add(Rule{Status: 503}); err == nil {
		t.Error("a generator repeating itself should give an error, not a duplicate id")
	}
}

// TestPerClientUnregisteredIDsShareOneCounter: made-up client ids (a token
// request may name any) still match rules, but share one per-client counter,
// so a thousand ids add one entry to clientHits, not a thousand.
func TestPerClientUnregisteredIDsShareOneCounter(t *testing.T) {
	e := newTestEngine(t)
	added := mustAdd(t, e, Rule{Endpoint: EndpointToken, Status: 503, Times: 1, PerClient: true})
	tokenReq := func(client string, unregistered bool) Request {
		return Request{Method: "POST", Path: "/oauth2/v2.0/token", ClientID: client, Endpoint: EndpointToken, Unregistered: unregistered}
	}
	fired := 0
	for i := range 1000 {
		if _, ok := e.Decide(context.Background(), tokenReq(fmt.Sprint("made-up-", i), true)); ok {
			fired++
		}
	}
	if fired != 1 {
		t.Errorf("the rule fired %d times for 1000 unregistered ids, want once (one shared counter)", fired)
	}
	if _, ok := e.Decide(context.Background(), tokenReq("sandbox-partner", false)); !ok {
		t.Error("a registered client did not get its own count")
	}
	st, _ := e.Get(added.ID)
	want := map[string]int{UnregisteredClients: 1, "sandbox-partner": 1}
	if len(st.ClientHits) != len(want) || fmt.Sprint(st.ClientHits) != fmt.Sprint(want) {
		t.Errorf("clientHits has %d keys, want %v", len(st.ClientHits), want)
	}
	// A rule naming an unregistered id still matches it.
	named := mustAdd(t, e, Rule{Endpoint: EndpointToken, ClientID: "made-up-x", Status: 503})
	if d, ok := e.Decide(context.Background(), tokenReq("made-up-x", true)); !ok || d.RuleID != named.ID {
		t.Errorf("rule bound to an unregistered id: %+v %v, want it to fire", d, ok)
	}
}
