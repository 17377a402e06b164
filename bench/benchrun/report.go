package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// reportVersion is the version of results.json when it held one Report
// alone (see readHistory).
const reportVersion = 1

// Report is one run's figures and the conditions they were measured
// under, so that a later run can be compared with it (see History).
type Report struct {
	Version  int      `json:"version"`
	Time     string   `json:"time"`
	Host     Host     `json:"host"`
	Settings Settings `json:"settings"`
	Results  []Result `json:"results"`
}

// Host describes the machine of a run.
type Host struct {
	CPUs       int    `json:"cpus"`
	GoVersion  string `json:"goVersion"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	LoadBefore string `json:"loadBefore,omitempty"` // /proc/loadavg at start
	LoadAfter  string `json:"loadAfter,omitempty"`  // and at the end
}

// Settings are the load settings of a run.
type Settings struct {
	Rounds      int     `json:"rounds"`
	DurationSec float64 `json:"durationSeconds"`
	WarmupSec   float64 `json:"warmupSeconds"`
	Threads     int     `json:"threads"`
	Connections int     `json:"connections"`
	ColdStarts  int     `json:"coldStarts"`
	Startups    int     `json:"startups,omitempty"`
	Quick       bool    `json:"quick"`
}

// Result is one figure: the median of its rounds, and how it compares with
// its base and its target.
type Result struct {
	Key    string    `json:"key"`
	Label  string    `json:"label"`
	Unit   string    `json:"unit"`
	Value  float64   `json:"value"`
	Rounds []float64 `json:"rounds,omitempty"`
	// P99Ms is the median of the rounds' 99th-percentile latency (wrk).
	P99Ms float64 `json:"p99Ms,omitempty"`
	// CPUMicrosPerReq is the median of the rounds' server CPU time (user
	// plus system, from /proc) per request: unlike a rate, it hardly
	// depends on what else the machine runs at the time.
	CPUMicrosPerReq float64 `json:"cpuMicrosPerRequest,omitempty"`
	// CPURatio is the base's CPU time per request over this figure's: the
	// ratio the rates would have if each had the machine to itself, and
	// far steadier than Ratio on a machine that other work shares.
	CPURatio float64 `json:"cpuRatio,omitempty"`
	// RedisCommandsPerReq is, in shared mode, the median of the rounds'
	// Redis commands (total_commands_processed) per request: the round
	// trips a request costs, or more when the client pipelines.
	RedisCommandsPerReq float64 `json:"redisCommandsPerRequest,omitempty"`
	Base                string  `json:"base,omitempty"`
	Ratio               float64 `json:"ratio,omitempty"`
	Target              string  `json:"target,omitempty"`
	Met                 *bool   `json:"met,omitempty"`
	Error               string  `json:"error,omitempty"`
}

// results collects figures as they are measured.
type results map[string]*Result

// set records a figure's rounds; its value is their median.
func (rs results) set(key string, rounds []float64, p99s []float64) {
	r := rs.get(key)
	r.Rounds = rounds
	r.Value = median(rounds)
	r.P99Ms = median(p99s)
}

// fail records why a figure could not be measured.
func (rs results) fail(key string, err error) {
	r := rs.get(key)
	if r.Error == "" {
		r.Error = err.Error()
	}
}

func (rs results) get(key string) *Result {
	if rs[key] == nil {
		rs[key] = &Result{Key: key}
	}
	return rs[key]
}

// evaluate fills labels, ratios and verdicts in the order of figures(). A
// figure without a value (or whose base has none) gets no verdict.
func evaluate(rs results) []Result {
	var out []Result
	for _, f := range figures() {
		r := *rs.get(f.key)
		r.Label, r.Unit, r.Base = f.label, f.unit, f.base
		measured := r.Error == "" && len(r.Rounds) > 0
		if b := rs[f.base]; f.base != "" && measured && b != nil && b.Error == "" && b.Value > 0 {
			r.Ratio = r.Value / b.Value
			if r.CPUMicrosPerReq > 0 && b.CPUMicrosPerReq > 0 {
				r.CPURatio = b.CPUMicrosPerReq / r.CPUMicrosPerReq
			}
		}
		switch f.kind {
		case ratioAtLeast:
			r.Target = fmt.Sprintf(">= %.0f%% of %s", f.limit*100, f.base)
			if r.Ratio > 0 {
				met := r.Ratio >= f.limit
				r.Met = &met
			}
		case baseAtLeast:
			r.Target = fmt.Sprintf("%s >= %.1fx this", f.base, f.limit)
			if r.Ratio > 0 {
				met := 1/r.Ratio >= f.limit
				r.Met = &met
			}
		case valueBelow:
			r.Target = fmt.Sprintf("< %g %s", f.limit, f.unit)
			if measured {
				met := r.Value < f.limit
				r.Met = &met
			}
		case valueAtMost:
			r.Target = fmt.Sprintf("<= %g %s", f.limit, f.unit)
			if measured {
				met := r.Value <= f.limit
				r.Met = &met
			}
		}
		out = append(out, r)
	}
	return out
}

// missed counts figures that failed their target or could not be measured.
func missed(list []Result) (targetsMissed, errs int) {
	for _, r := range list {
		if r.Met != nil && !*r.Met {
			targetsMissed++
		}
		if r.Error != "" {
			errs++
		}
	}
	return targetsMissed, errs
}

// writeTable prints the figures; prev (may be nil) adds the change from an
// earlier run of the same figure.
func writeTable(w io.Writer, rep Report, prev *Report) error {
	before := map[string]Result{}
	if prev != nil {
		for _, r := range prev.Results {
			before[r.Key] = r
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tvalue\tp99\tcpu/req\tratio\tcpu ratio\ttarget\tverdict\tvs previous")
	for _, r := range rep.Results {
		value, p99, cpu, ratio, cpuRatio, verdict, change := "-", "", "", "", "", "", ""
		if r.Error == "" && len(r.Rounds) > 0 {
			value = formatValue(r.Value, r.Unit)
		}
		if r.P99Ms > 0 {
			p99 = fmt.Sprintf("%.2f ms", r.P99Ms)
		}
		if r.CPUMicrosPerReq > 0 {
			cpu = fmt.Sprintf("%.1f us", r.CPUMicrosPerReq)
		}
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.0f%% of %s", r.Ratio*100, r.Base)
		}
		if r.CPURatio > 0 {
			cpuRatio = fmt.Sprintf("%.0f%%", r.CPURatio*100)
		}
		switch {
		case r.Error != "":
			verdict = "ERROR"
		case r.Met == nil:
		case *r.Met:
			verdict = "met"
		default:
			verdict = "MISSED"
		}
		if p, ok := before[r.Key]; ok && p.Error == "" && p.Value > 0 && r.Error == "" {
			change = fmt.Sprintf("%+.0f%%", (r.Value/p.Value-1)*100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Label, value, p99, cpu, ratio, cpuRatio, r.Target, verdict, change)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	sep := "\n"
	for _, r := range rep.Results {
		if r.RedisCommandsPerReq > 0 {
			fmt.Fprintf(w, "%s%s: %.2f Redis commands per request\n", sep, r.Label, r.RedisCommandsPerReq)
			sep = ""
		}
	}
	for _, r := range rep.Results {
		if r.Error != "" {
			fmt.Fprintf(w, "\n%s: %s\n", r.Label, firstLines(r.Error, 6))
		}
	}
	return nil
}

// formatValue prints rates as whole numbers with thousands separators and
// other units with enough precision to compare.
func formatValue(v float64, unit string) string {
	switch unit {
	case "req/s", "ops/s":
		return thousands(int64(math.Round(v))) + " " + unit
	case "ms":
		return fmt.Sprintf("%.1f ms", v)
	case "allocs":
		return fmt.Sprintf("%.0f allocs", v)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// thousands writes n with comma separators: 71234 → "71,234".
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n  ")
}
