package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// signingBenchmark is the Go benchmark whose rate is the token endpoint's
// ceiling: RS256 signing with the sandbox key on every core.
const signingBenchmark = "BenchmarkSignRS256Parallel"

// buildSigningBench compiles the idp package's tests once, so that each
// round runs the benchmark without compiling in the middle of the run.
func buildSigningBench(ctx context.Context, root, out string) error {
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", out, "./idp")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go test -c ./idp: %w\n%s", err, b)
	}
	return nil
}

// signingOpsPerSecond sizes a signing round: the benchmark runs a fixed
// number of operations (about this many per second of round), so that its
// CPU time can be divided by the operations it did. A faster machine
// finishes sooner; the rate is measured either way.
const signingOpsPerSecond = 500

// signingRate runs the signing benchmark for about d's worth of operations
// and returns its rate and its CPU time per operation in microseconds.
// RunParallel's ns/op is wall time per operation across all cores, so
// 1e9/ns_op is the rate of the whole machine; CPU per operation, from the
// process's user and system time, hardly depends on what else runs.
func signingRate(ctx context.Context, testBin, dir string, d time.Duration) (rate, cpuMicros float64, err error) {
	ops := min(max(int(d.Seconds()*signingOpsPerSecond), 100), 100000)
	cmd := exec.CommandContext(ctx, testBin, "-test.run", "^$", "-test.bench", "^"+signingBenchmark+"$",
		"-test.benchtime", strconv.Itoa(ops)+"x")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w\n%s", signingBenchmark, err, out)
	}
	ns, err := parseBenchNsPerOp(string(out), signingBenchmark)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w\n%s", signingBenchmark, err, out)
	}
	// With an iteration count, the benchmark runs once with one operation,
	// then with ops: ops+1 signatures in all (plus start-up, negligible).
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return 1e9 / median(ns), float64(cpu.Microseconds()) / float64(ops+1), nil
}

// parseBenchNsPerOp finds every result line of the named benchmark
// ("BenchmarkX-2   1234   812345 ns/op ...") and returns its ns/op.
func parseBenchNsPerOp(out, name string) ([]float64, error) {
	ns, err := parseBenchMetric(out, name, "ns/op")
	for _, v := range ns {
		if v <= 0 {
			return nil, fmt.Errorf("%s: ns/op %v", name, v)
		}
	}
	return ns, err
}

// parseBenchMetric returns the value of unit (ns/op, allocs/op...) on
// every result line of the named benchmark.
func parseBenchMetric(out, name, unit string) ([]float64, error) {
	var vs []float64
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || (f[0] != name && !strings.HasPrefix(f[0], name+"-")) {
			continue
		}
		for i := 2; i < len(f); i++ {
			if f[i] != unit {
				continue
			}
			v, err := strconv.ParseFloat(f[i-1], 64)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("benchmark line %q: bad %s", sc.Text(), unit)
			}
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("no %s for %s", unit, name)
	}
	return vs, nil
}

// allocsBenchmark counts what the sandbox itself allocates per
// authenticated GET of the trials (bench/profile's handler benchmark).
const allocsBenchmark = "BenchmarkServerTrials"

// measureAllocs runs allocsBenchmark with -benchmem: allocations per
// request do not depend on the machine's load, unlike its ns/op.
func (r *runner) measureAllocs(ctx context.Context) {
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "^"+allocsBenchmark+"$",
		"-benchmem", "-benchtime", "2000x", "-count", "3", "./bench/profile")
	cmd.Dir = r.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.res.fail(keyTrialsAllocs, fmt.Errorf("%s: %w\n%s", allocsBenchmark, err, out))
		return
	}
	allocs, err := parseBenchMetric(string(out), allocsBenchmark, "allocs/op")
	if err != nil {
		r.res.fail(keyTrialsAllocs, fmt.Errorf("%s: %w\n%s", allocsBenchmark, err, out))
		return
	}
	r.res.set(keyTrialsAllocs, allocs, nil)
	r.logf("allocations per authenticated GET: %v", allocs)
}
