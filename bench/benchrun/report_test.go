package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	rs := results{}
	rs.set(keyCeiling, []float64{100, 80, 90}, nil)
	rs.set(keyTrials, []float64{80}, nil)    // 80/90: met
	rs.set(keyPing, []float64{40}, nil)      // 40/90: missed
	rs.set(keySigning, []float64{1000}, nil) //
	rs.fail(keyToken, errString("wrk failed"))
	rs.set(keyColdStart, []float64{60, 20, 30}, nil) // median 30 < 50: met
	rs.set(keyRSSIdle, []float64{25}, nil)           // not under 25: missed
	byKey := map[string]Result{}
	for _, r := range evaluate(rs) {
		byKey[r.Key] = r
	}
	tests := []struct {
		key       string
		value     float64
		ratio     float64
		met       string // "met", "missed", "none"
		wantError bool
	}{
		{keyCeiling, 90, 0, "none", false},
		{keyTrials, 80, 80.0 / 90, "met", false},
		{keyPing, 40, 40.0 / 90, "missed", false},
		{keyToken, 0, 0, "none", true},
		{keyColdStart, 30, 0, "met", false},
		{keyRSSIdle, 25, 0, "missed", false},
		{keyQualified, 0, 0, "none", false},
	}
	for _, tt := range tests {
		r := byKey[tt.key]
		met := "none"
		if r.Met != nil {
			met = map[bool]string{true: "met", false: "missed"}[*r.Met]
		}
		if r.Value != tt.value || r.Ratio != tt.ratio || met != tt.met || (r.Error != "") != tt.wantError {
			t.Errorf("%s: value %v ratio %v verdict %s error %q; want %v %v %s error %v",
				tt.key, r.Value, r.Ratio, met, r.Error, tt.value, tt.ratio, tt.met, tt.wantError)
		}
	}
	if n := len(evaluate(rs)); n != len(figures()) {
		t.Errorf("evaluate returned %d results, want one per figure (%d)", n, len(figures()))
	}
	targetsMissed, errs := missed(evaluate(rs))
	if targetsMissed != 2 || errs != 1 {
		t.Errorf("missed = %d targets, %d errors; want 2, 1", targetsMissed, errs)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestReportRoundTripAndTable(t *testing.T) {
	rs := results{}
	rs.set(keyCeiling, []float64{50000}, []float64{2.5})
	rs.set(keyTrials, []float64{42000}, []float64{3})
	rep := Report{Version: reportVersion, Results: evaluate(rs)}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := writeHistory(path, History{Runs: []Report{rep}}); err != nil {
		t.Fatal(err)
	}
	h, err := readHistory(path)
	prev, _ := h.latest()
	if err != nil || prev == nil || len(prev.Results) != len(rep.Results) {
		t.Fatalf("readHistory = %+v, %v", h, err)
	}
	rs.set(keyTrials, []float64{46200}, []float64{3})
	rs.get(keyCeiling).CPUMicrosPerReq = 20
	rs.get(keyTrials).CPUMicrosPerReq = 40
	var out bytes.Buffer
	if err := writeTable(&out, Report{Results: evaluate(rs)}, prev); err != nil {
		t.Fatal(err)
	}
	table := out.String()
	for _, want := range []string{"50,000 req/s", "46,200 req/s", "92% of ceiling", "50%", "40.0 us", "met", "+10%", "2.50 ms"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	missing, err := readHistory(filepath.Join(t.TempDir(), "none.json"))
	if len(missing.Runs) != 0 || err != nil {
		t.Errorf("readHistory of a missing file = %+v, %v; want no runs", missing, err)
	}
}
