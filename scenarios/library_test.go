package scenarios

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

var (
	tokenReq = Request{Method: "POST", Path: "/oauth2/v2.0/token", ClientID: "a", Endpoint: EndpointToken}
	pingReq  = Request{Method: "GET", Path: "/health/ping", ClientID: "a", Endpoint: EndpointPing}
)

// scenarioChecks says, per embedded scenario, what its description promises,
// checked at the Decision level on a fresh engine with only it active.
var scenarioChecks = map[string]func(t *testing.T, e checked){
	"token-endpoint-down": func(t *testing.T, e checked) {
		for range 10 {
			if d, ok := e.Decide(context.Background(), tokenReq); !ok || d.Status != 503 || d.RetryAfter <= 0 {
				t.Fatalf("token request: %+v, %v", d, ok)
			}
		}
		expectNormal(t, e, apiReq("a"), pingReq)
	},
	"api-unavailable-then-recovers": func(t *testing.T, e checked) {
		for i := range 3 {
			if d, ok := e.Decide(context.Background(), apiReq("a")); !ok || d.Status != 503 || d.RetryAfter <= 0 {
				t.Fatalf("call %d: %+v, %v", i+1, d, ok)
			}
		}
		expectNormal(t, e, apiReq("a"), apiReq("b"), tokenReq)
	},
	"rate-limited": func(t *testing.T, e checked) {
		expectNormal(t, e, tokenReq)
		for i := range 20 {
			if d, ok := e.Decide(context.Background(), apiReq("a")); !ok || d.Status != 429 || d.RetryAfter <= 0 {
				t.Fatalf("call %d: %+v, %v", i+1, d, ok)
			}
		}
		expectNormal(t, e, apiReq("a"))
	},
	"token-endpoint-throttled": func(t *testing.T, e checked) {
		for i := range 3 {
			if d, ok := e.Decide(context.Background(), tokenReq); !ok || d.Status != 429 || d.RetryAfter != time.Minute {
				t.Fatalf("token request %d: %+v, %v", i, d, ok)
			}
		}
		expectNormal(t, e, tokenReq, apiReq("a"), pingReq)
	},
	"token-expired": func(t *testing.T, e checked) {
		for _, c := range []string{"a", "b"} {
			if d, ok := e.Decide(context.Background(), apiReq(c)); !ok || d.Status != 401 || d.Reason != "expired" {
				t.Fatalf("first call of %s: %+v, %v", c, d, ok)
			}
			expectNormal(t, e, apiReq(c))
		}
		expectNormal(t, e, tokenReq)
	},
	"permissions-revoked": func(t *testing.T, e checked) {
		for range 5 {
			if d, ok := e.Decide(context.Background(), apiReq("a")); !ok || d.Status != 403 {
				t.Fatalf("api call: %+v, %v", d, ok)
			}
		}
		expectNormal(t, e, tokenReq)
	},
	"slow-network": func(t *testing.T, e checked) {
		var total time.Duration
		for range 30 {
			for _, req := range []Request{tokenReq, apiReq("a"), pingReq} {
				d, ok := e.Decide(context.Background(), req)
				if !ok || d.Delay <= 0 || d.Delay > 5*time.Second || d.Status != 0 || d.Fault != FaultNone {
					t.Fatalf("%s: %+v, %v", req.Endpoint, d, ok)
				}
				total += d.Delay
			}
		}
		if mean := total / 90; mean < 150*time.Millisecond || mean > time.Second {
			t.Errorf("mean delay %v, want a few hundred ms", mean)
		}
	},
	"flaky": func(t *testing.T, e checked) {
		fired := 0
		for range 1000 {
			if d, ok := e.Decide(context.Background(), apiReq("a")); ok {
				if d.Status != 503 || d.RetryAfter <= 0 {
					t.Fatalf("decision %+v", d)
				}
				fired++
			}
		}
		if fired < 70 || fired > 130 {
			t.Errorf("%d of 1000 calls failed, want about 10%%", fired)
		}
		expectNormal(t, e, tokenReq, pingReq)
	},
	"connection-resets": func(t *testing.T, e checked) {
		fired := 0
		for range 1000 {
			if d, ok := e.Decide(context.Background(), apiReq("a")); ok {
				if d.Fault != FaultReset {
					t.Fatalf("decision %+v", d)
				}
				fired++
			}
		}
		if fired < 250 || fired > 350 {
			t.Errorf("%d of 1000 calls reset, want about 30%%", fired)
		}
	},
	"invalid-client": func(t *testing.T, e checked) {
		if d, ok := e.Decide(context.Background(), tokenReq); !ok || d.Error != ErrorInvalidClient || d.Status != 401 {
			t.Fatalf("token request: %+v, %v", d, ok)
		}
		expectNormal(t, e, apiReq("a"))
	},
	"api-hangs": func(t *testing.T, e checked) {
		if d, ok := e.Decide(context.Background(), apiReq("a")); !ok || d.Fault != FaultHang {
			t.Fatalf("first call: %+v, %v", d, ok)
		}
		expectNormal(t, e, apiReq("a"))
	},
	"lost-answers": func(t *testing.T, e checked) {
		write := func(client string) Request {
			return Request{Method: "POST", Path: "/api/v1/referrals/", ClientID: client, Endpoint: EndpointAPI}
		}
		expectNormal(t, e, apiReq("a"), tokenReq)
		for _, c := range []string{"a", "b"} {
			if d, ok := e.Decide(context.Background(), write(c)); !ok || d.Fault != FaultDropAfterCommit {
				t.Fatalf("first write of %s: %+v, %v", c, d, ok)
			}
			expectNormal(t, e, write(c))
		}
	},
	"maintenance-window": func(t *testing.T, e checked) {
		expectPhases(t, e, apiReq("a"), []phaseWant{{30 * time.Minute, 503, 300 * time.Second, false}})
		expectNormal(t, e, tokenReq)
	},
	"outage-then-throttling": func(t *testing.T, e checked) {
		expectNormal(t, e, tokenReq)
		expectPhases(t, e, apiReq("a"), []phaseWant{
			{5 * time.Minute, 503, 30 * time.Second, false},
			{2 * time.Minute, 429, 5 * time.Second, false},
			{10 * time.Minute, 0, 0, true},
		})
	},
	"token-endpoint-outage": func(t *testing.T, e checked) {
		expectNormal(t, e, apiReq("a"))
		expectPhases(t, e, tokenReq, []phaseWant{{15 * time.Minute, 503, 60 * time.Second, false}})
	},
	"brownout": func(t *testing.T, e checked) {
		window := func() (failed, slow int) {
			for range 200 {
				d, ok := e.Decide(context.Background(), apiReq("a"))
				if !ok || d.Delay <= 0 {
					t.Fatalf("brownout call: %+v, %v, want a slow answer", d, ok)
				}
				if d.Status == 503 {
					failed++
				}
			}
			return failed, 200
		}
		if failed, n := window(); failed < 25 || failed > 80 {
			t.Errorf("%d of %d calls failed in the first stretch, want about a quarter", failed, n)
		}
		e.clk.Advance(20 * time.Minute)
		expectNormal(t, e, apiReq("a"))
		e.clk.Advance(5 * time.Minute)
		if failed, n := window(); failed < 25 || failed > 80 {
			t.Errorf("%d of %d calls failed in the second stretch, want about a quarter", failed, n)
		}
		e.clk.Advance(10 * time.Minute)
		expectNormal(t, e, apiReq("a"))
		if rs, _ := e.e.Rules(context.Background()); len(rs) != 0 {
			t.Errorf("after the last phase %d rules are active, want them retired", len(rs))
		}
	},
	"malformed-response": func(t *testing.T, e checked) {
		if d, ok := e.Decide(context.Background(), apiReq("a")); !ok || d.Fault != FaultMalformed {
			t.Fatalf("first call: %+v, %v", d, ok)
		}
		expectNormal(t, e, apiReq("a"))
	},
}

// checked decides with a MemoryEngine, failing the test on an error; clk
// is the engine's clock, which timelines run on.
type checked struct {
	t   *testing.T
	e   *MemoryEngine
	clk *clock.Adjustable
}

// Decide is Engine.Decide without the error, which fails the test.
func (c checked) Decide(ctx context.Context, req Request) (Decision, bool) {
	c.t.Helper()
	d, ok, err := c.e.Decide(ctx, req)
	if err != nil {
		c.t.Fatalf("Decide: %v", err)
	}
	return d, ok
}

// apiReq is an API request of client.
func apiReq(client string) Request {
	return Request{Method: "GET", Path: "/api/v1/referrals/trials", ClientID: client, Endpoint: EndpointAPI}
}

// expectNormal fails when any of reqs gets a decision.
func expectNormal(t *testing.T, e checked, reqs ...Request) {
	t.Helper()
	for _, req := range reqs {
		if d, ok := e.Decide(context.Background(), req); ok {
			t.Errorf("%s request for %q: got %+v, want the normal answer", req.Endpoint, req.ClientID, d)
		}
	}
}

func TestEmbeddedScenarios(t *testing.T) {
	lib, err := LoadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	for _, required := range []string{"token-endpoint-down", "api-unavailable-then-recovers", "rate-limited",
		"token-expired", "permissions-revoked", "slow-network", "flaky", "connection-resets"} {
		if _, ok := libGet(t, lib, required); !ok {
			t.Errorf("scenario %q missing", required)
		}
	}
	for _, sc := range libScenarios(t, lib) {
		t.Run(sc.Name, func(t *testing.T) {
			if want := "embedded library/" + sc.Name + ".json"; sc.Source != want {
				t.Errorf("source %q, want %q (file named after the scenario)", sc.Source, want)
			}
			for i, r := range sc.Rules {
				if err := r.Validate(); err != nil {
					t.Errorf("rules[%d]: %v", i, err)
				}
			}
			check, ok := scenarioChecks[sc.Name]
			if !ok {
				t.Fatal("no behaviour check for this scenario")
			}
			clk := clock.NewAdjustable(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) })
			e := New(Config{Library: lib, Clock: clk})
			if _, err := e.Activate(context.Background(), sc.Name, ""); err != nil {
				t.Fatal(err)
			}
			check(t, checked{t, e, clk})
		})
	}
}

func TestLibraryCopies(t *testing.T) {
	lib, err := LoadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := libGet(t, lib, "slow-network")
	sc.Rules[0].Delay.Median = Duration(time.Hour)
	sc.Rules[0].Status = 500
	again, _ := libGet(t, lib, "slow-network")
	if again.Rules[0].Delay.Median == Duration(time.Hour) || again.Rules[0].Status != 0 {
		t.Error("changing a returned scenario changed the library")
	}
}

// libGet, libNames and libScenarios read lib, failing the test on an
// error.
func libGet(t *testing.T, lib *Library, name string) (Scenario, bool) {
	t.Helper()
	sc, ok, err := lib.Get(context.Background(), name)
	if err != nil {
		t.Fatalf("Get(%q): %v", name, err)
	}
	return sc, ok
}

func libNames(t *testing.T, lib *Library) []string {
	t.Helper()
	names, err := lib.Names(context.Background())
	if err != nil {
		t.Fatalf("Names: %v", err)
	}
	return names
}

func libScenarios(t *testing.T, lib *Library) []Scenario {
	t.Helper()
	all, err := lib.Scenarios(context.Background())
	if err != nil {
		t.Fatalf("Scenarios: %v", err)
	}
	return all
}

// writeFiles creates name -> content files in a new temporary directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestAddDir(t *testing.T) {
	good := `{"name":"%s","description":"d","rules":[{"endpoint":"api","status":500}]}`
	tests := []struct {
		name    string
		files   map[string]string
		wantErr []string // substrings; nil means success
	}{
		{"adds", map[string]string{"ours.json": fmt.Sprintf(good, "team-500"), "notes.txt": "ignored"}, nil},
		{"bad rule", map[string]string{"bad.json": `{"name":"x","description":"d","rules":[{"endpoint":"api","status":418}]}`},
			[]string{"bad.json", "rules[0]", "status: 418"}},
		{"bad json", map[string]string{"broken.json": `{"name":`}, []string{"broken.json"}},
		{"unknown field", map[string]string{"typo.json": `{"name":"x","description":"d","rules":[{"status":503,"probabilty":0.1}]}`},
			[]string{"typo.json", "probabilty"}},
		{"no rules", map[string]string{"empty.json": `{"name":"x","description":"d","rules":[]}`}, []string{"empty.json", "rules"}},
		{"bad name", map[string]string{"n.json": fmt.Sprintf(good, "Big Name")}, []string{"n.json", "name"}},
		{"id in file", map[string]string{"id.json": `{"name":"x","description":"d","rules":[{"id":"r1","status":503}]}`}, []string{"id.json", "rules[0]"}},
		{"clash with embedded", map[string]string{"mine.json": fmt.Sprintf(good, "flaky")},
			[]string{"mine.json", "embedded library/flaky.json"}},
		{"clash inside dir", map[string]string{"a.json": fmt.Sprintf(good, "dup"), "b.json": fmt.Sprintf(good, "dup")},
			[]string{"a.json", "b.json"}},
		{"no files", map[string]string{"readme.md": "x"}, []string{"no .json files"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib, err := LoadLibrary()
			if err != nil {
				t.Fatal(err)
			}
			before := len(libNames(t, lib))
			err = lib.AddDir(writeFiles(t, tt.files))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := libGet(t, lib, "team-500"); !ok || len(libNames(t, lib)) != before+1 {
					t.Errorf("names after AddDir: %v", libNames(t, lib))
				}
				return
			}
			if err == nil {
				t.Fatal("AddDir succeeded, want an error")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if len(libNames(t, lib)) != before {
				t.Errorf("failed AddDir changed the library: %v", libNames(t, lib))
			}
		})
	}
	if err := NewLibrary().AddDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing directory accepted")
	}
}

// phaseWant is what one phase of a timeline answers: a status with its
// Retry-After, or a delay alone.
type phaseWant struct {
	lasts      time.Duration
	status     int
	retryAfter time.Duration
	delayed    bool
}

// expectPhases walks the engine's clock through phases, checking req's
// decision at each phase's start and just before its end, and that the
// rules have retired after the last.
func expectPhases(t *testing.T, e checked, req Request, phases []phaseWant) {
	t.Helper()
	check := func(i int, p phaseWant) {
		t.Helper()
		d, ok := e.Decide(context.Background(), req)
		if !ok || d.Status != p.status || d.RetryAfter != p.retryAfter || (d.Delay > 0) != p.delayed {
			t.Fatalf("phase %d at %s: %+v, %v, want %+v", i, e.clk.Offset(), d, ok, p)
		}
	}
	for i, p := range phases {
		check(i, p)
		e.clk.Advance(p.lasts - time.Second)
		check(i, p)
		e.clk.Advance(time.Second)
	}
	expectNormal(t, e, req)
	if rs, _ := e.e.Rules(context.Background()); len(rs) != 0 {
		t.Errorf("after the last phase %d rules are active, want them retired", len(rs))
	}
}
