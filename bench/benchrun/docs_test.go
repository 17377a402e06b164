package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsMatchResults: the generated tables of docs/benchmarks.md are
// what the committed bench/results.json renders. After changing either
// the results or the rendering, run `bench/run --render`.
func TestDocsMatchResults(t *testing.T) {
	root := filepath.Join("..", "..")
	h, err := readHistory(filepath.Join(root, "bench", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Runs) == 0 || len(h.Growth) == 0 {
		t.Fatalf("bench/results.json holds %d run(s) and %d growth run(s); the committed file holds at least one of each", len(h.Runs), len(h.Growth))
	}
	b, err := os.ReadFile(filepath.Join(root, "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := updateDoc(string(b), renderBlocks(h))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("docs/benchmarks.md's generated tables differ from bench/results.json; run bench/run --render. Want:\n%s", want)
	}
}

// TestUpdateDoc: a block's text is replaced between its markers, the rest
// kept; a document without the markers is an error, not a silent no-op.
func TestUpdateDoc(t *testing.T) {
	doc := "# Title\n\nprose\n\n" + beginMarker(blockFigures) + "\nold table\n" + endMarker(blockFigures) +
		"\n\nmore prose\n\n" + beginMarker(blockGrowth) + "\n" + endMarker(blockGrowth) + "\n"
	got, err := updateDoc(doc, map[string]string{blockFigures: "new table\n", blockGrowth: "growth\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := "# Title\n\nprose\n\n" + beginMarker(blockFigures) + "\nnew table\n" + endMarker(blockFigures) +
		"\n\nmore prose\n\n" + beginMarker(blockGrowth) + "\ngrowth\n" + endMarker(blockGrowth) + "\n"
	if got != want {
		t.Errorf("updateDoc =\n%s\nwant\n%s", got, want)
	}
	if again, _ := updateDoc(got, map[string]string{blockFigures: "new table\n", blockGrowth: "growth\n"}); again != got {
		t.Errorf("a second update changed the document:\n%s", again)
	}
	if _, err := updateDoc("# no markers\n", map[string]string{}); err == nil {
		t.Error("a document without markers updated")
	}
}

// TestRenderShowsChangePerFigure: each figure's change from the run
// before, the machine and the ceilings it was compared with are in the
// table.
func TestRenderShowsChangePerFigure(t *testing.T) {
	run := func(when string, trials float64) Report {
		rs := results{}
		rs.set(keyCeiling, []float64{30000}, nil)
		rs.set(keyTrials, []float64{trials}, nil)
		rs.set(keySigning, []float64{1200}, nil)
		return Report{Time: when, Host: Host{CPUs: 2, GoVersion: "go1.26", OS: "linux", Arch: "amd64", LoadBefore: "9.0 8.0 7.0"},
			Settings: Settings{Rounds: 3, DurationSec: 5, Threads: 2, Connections: 50}, Results: evaluate(rs)}
	}
	h := History{Runs: []Report{run("2026-11-24T10:00:00Z", 20000), run("2026-11-25T10:00:00Z", 15000)},
		Growth: []GrowthReport{
			{Time: "2026-11-24T10:00:00Z", Rows: []GrowthRow{{Records: 100, StartSeconds: 0.02, RSSMB: 16, ListRate: 5000, ListCPUMicros: 190}}},
			{Time: "2026-11-25T10:00:00Z", Rows: []GrowthRow{{Records: 100, StartSeconds: 0.02, RSSMB: 16, ListRate: 5000, ListCPUMicros: 380}, {Records: 1000000, Error: "restart: not healthy after 5m0s"}}},
		}}
	figures := renderFigures(h)
	for _, want := range []string{"2 CPU(s)", "go1.26", "9.0 8.0 7.0", "under load", "bare net/http handler (ceiling): 30,000 req/s",
		"RS256 signing, all cores (token ceiling): 1,200 ops/s", "| GET /api/v1/referrals/trials (auth) | 15,000 req/s |", "| -25% |", "2026-11-24 10:00 UTC"} {
		if !strings.Contains(figures, want) {
			t.Errorf("figures table lacks %q:\n%s", want, figures)
		}
	}
	growth := renderGrowth(h)
	for _, want := range []string{"| 100 |", "380 µs (+100%)", "1,000,000 referrals: not measured: restart: not healthy after 5m0s"} {
		if !strings.Contains(growth, want) {
			t.Errorf("growth table lacks %q:\n%s", want, growth)
		}
	}
}

// TestReadHistoryOfOneRun: a results.json of version 1 (one run, before
// the history) is read as a history of that run.
func TestReadHistoryOfOneRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(path, []byte(`{"version":1,"time":"2026-11-25T10:00:00Z","results":[{"key":"trials","value":19700}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := readHistory(path)
	last, prev := h.latest()
	if err != nil || last == nil || prev != nil || last.Results[0].Value != 19700 {
		t.Fatalf("readHistory = %+v, %v; want one run", h, err)
	}
	if err := os.WriteFile(path, []byte(`{"version":9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readHistory(path); err == nil {
		t.Error("an unknown version was read")
	}
}
