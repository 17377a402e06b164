package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// wrkSettings is the load every HTTP measurement runs under, the ceiling's
// included, so that ratios compare like with like.
type wrkSettings struct {
	threads     int
	connections int
	duration    time.Duration
}

// wrkJob is one load target: a URL, optional headers, and an optional Lua
// script (with its arguments) that shapes each request.
type wrkJob struct {
	url        string
	headers    []string
	script     string
	scriptArgs []string
}

// wrkResult is what one wrk run reports.
type wrkResult struct {
	RequestsPerSec float64
	Requests       int64
	Non2xx         int64
	SocketErrors   int64
	P50Ms, P99Ms   float64
}

// args builds wrk's command line.
func (s wrkSettings) args(j wrkJob, d time.Duration) []string {
	a := []string{
		"-t" + strconv.Itoa(s.threads), "-c" + strconv.Itoa(s.connections),
		"-d" + strconv.Itoa(max(1, int(d.Round(time.Second)/time.Second))) + "s",
		"--latency", "--timeout", "5s",
	}
	for _, h := range j.headers {
		a = append(a, "-H", h)
	}
	if j.script != "" {
		a = append(a, "-s", j.script)
	}
	a = append(a, j.url)
	if len(j.scriptArgs) > 0 {
		a = append(a, "--")
		a = append(a, j.scriptArgs...)
	}
	return a
}

// runWrk runs wrk once for d and parses its report. Any non-2xx answer or
// socket error fails the run: a rate measured on errors measures the wrong
// thing (an expired token would otherwise look like a fast endpoint).
func runWrk(ctx context.Context, s wrkSettings, j wrkJob, d time.Duration) (wrkResult, error) {
	cmd := exec.CommandContext(ctx, "wrk", s.args(j, d)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %w\n%s", j.url, err, out)
	}
	res, err := parseWrk(string(out))
	if err != nil {
		return res, fmt.Errorf("wrk %s: %w\n%s", j.url, err, out)
	}
	if res.Non2xx > 0 || res.SocketErrors > 0 {
		return res, fmt.Errorf("wrk %s: %d non-2xx answers and %d socket errors in %d requests", j.url, res.Non2xx, res.SocketErrors, res.Requests)
	}
	return res, nil
}

// parseWrk reads wrk's text report: "Requests/sec:", the request count,
// "Non-2xx or 3xx responses:", "Socket errors:" and, with --latency, the
// 50% and 99% lines of the latency distribution.
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	found := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		fields := strings.Fields(line)
		var err error
		switch {
		case strings.HasPrefix(line, "Requests/sec:") && len(fields) == 2:
			r.RequestsPerSec, err = strconv.ParseFloat(fields[1], 64)
			found = err == nil
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:") && len(fields) == 5:
			r.Non2xx, err = strconv.ParseInt(fields[4], 10, 64)
		case strings.HasPrefix(line, "Socket errors:"):
			r.SocketErrors, err = parseSocketErrors(strings.TrimPrefix(line, "Socket errors:"))
		case len(fields) >= 3 && fields[1] == "requests" && fields[2] == "in":
			r.Requests, err = strconv.ParseInt(fields[0], 10, 64)
		case len(fields) == 2 && fields[0] == "50%":
			r.P50Ms, err = parseWrkDuration(fields[1])
		case len(fields) == 2 && fields[0] == "99%":
			r.P99Ms, err = parseWrkDuration(fields[1])
		}
		if err != nil {
			return r, fmt.Errorf("parse wrk line %q: %w", line, err)
		}
	}
	if !found {
		return r, errors.New(`no "Requests/sec:" line in wrk's output`)
	}
	return r, nil
}

// parseSocketErrors sums "connect 0, read 0, write 0, timeout 0".
func parseSocketErrors(s string) (int64, error) {
	var total int64
	for _, part := range strings.Split(s, ",") {
		f := strings.Fields(part)
		if len(f) != 2 {
			return 0, fmt.Errorf("socket errors part %q", part)
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("socket errors part %q: %w", part, err)
		}
		total += n
	}
	return total, nil
}

// parseWrkDuration reads wrk's latency values ("812.00us", "1.23ms",
// "2.01s", "1.50m") as milliseconds.
func parseWrkDuration(s string) (float64, error) {
	units := []struct {
		suffix string
		ms     float64
	}{{"us", 0.001}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, fmt.Errorf("latency %q: %w", s, err)
			}
			return v * u.ms, nil
		}
	}
	return 0, fmt.Errorf("latency %q: unknown unit", s)
}
