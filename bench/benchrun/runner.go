package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

//go:embed lua/*.lua
var luaScripts embed.FS

//go:embed peer/*.mjs
var peerScripts embed.FS

// runner measures every figure of one run.
type runner struct {
	cfg  config
	ps   *procs
	clk  clock.Clock
	root string    // the module's root directory
	log  io.Writer // progress, on stderr
	res  results

	work       string // temporary directory of this run
	bin        string // the sandbox binary, built as released
	ceilingBin string
}

func (r *runner) outPath() string {
	if filepath.IsAbs(r.cfg.out) {
		return r.cfg.out
	}
	return filepath.Join(r.root, r.cfg.out)
}

func (r *runner) logf(format string, args ...any) { fmt.Fprintf(r.log, format+"\n", args...) }

// measure builds what it needs and measures every figure. A figure that
// fails is recorded with its error and the run goes on; only a failed
// build or an interrupt stops it.
func (r *runner) measure(ctx context.Context) (Report, error) {
	rep := Report{
		Version: reportVersion,
		Time:    r.clk.Now().UTC().Format(time.RFC3339),
		Host:    r.host(),
		Settings: Settings{
			Rounds: r.cfg.rounds, DurationSec: r.cfg.duration.Seconds(), WarmupSec: r.cfg.warmup.Seconds(),
			Threads: r.cfg.threads, Connections: r.cfg.connections, ColdStarts: r.cfg.coldStarts, Startups: r.cfg.startups, Quick: r.cfg.quick,
		},
	}
	if err := r.setUp(ctx); err != nil {
		return rep, err
	}
	defer r.tearDown()
	for _, s := range r.selectedSteps() {
		s.measure(ctx)
		if ctx.Err() != nil {
			return rep, fmt.Errorf("interrupted: %w", ctx.Err())
		}
	}
	rep.Host.LoadAfter = loadAverage()
	measured := slices.Collect(maps.Keys(r.res))
	rep.Results = evaluate(r.res)
	if len(r.cfg.only) > 0 {
		// Only what was measured: the other figures were not attempted.
		rep.Results = slices.DeleteFunc(rep.Results, func(res Result) bool { return !slices.Contains(measured, res.Key) })
	}
	return rep, nil
}

// host describes this machine, with its load now.
func (r *runner) host() Host {
	return Host{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, LoadBefore: loadAverage()}
}

// setUp makes the run's temporary directory and builds the binaries;
// tearDown removes the directory.
func (r *runner) setUp(ctx context.Context) error {
	var err error
	if r.work, err = os.MkdirTemp("", "referrals-sandbox-bench-"); err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	if err := r.build(ctx); err != nil {
		r.tearDown()
		return err
	}
	return nil
}

func (r *runner) tearDown() { _ = os.RemoveAll(r.work) }

// build compiles the sandbox as it is released (static, trimmed,
// stripped), unless --bin gives one, and the ceiling server, and records
// the binary's size.
func (r *runner) build(ctx context.Context) error {
	r.bin = filepath.Join(r.work, "referrals-sandbox")
	r.ceilingBin = filepath.Join(r.work, "ceiling")
	builds := []struct{ out, pkg string }{{r.bin, "./cmd/referrals-sandbox"}, {r.ceilingBin, "./bench/ceiling"}}
	if r.cfg.bin != "" {
		var err error
		if r.bin, err = filepath.Abs(r.cfg.bin); err != nil {
			return fmt.Errorf("--bin: %w", err)
		}
		builds = builds[1:]
	}
	for _, b := range builds {
		r.logf("building %s", b.pkg)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", b.out, b.pkg)
		cmd.Dir = r.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
		}
	}
	st, err := os.Stat(r.bin)
	if err != nil {
		return fmt.Errorf("binary size: %w", err)
	}
	r.res.set(keyBinary, []float64{float64(st.Size()) / 1e6}, nil)
	return nil
}

// measureColdStart takes the median of cfg.coldStarts starts.
func (r *runner) measureColdStart(ctx context.Context) {
	var ms []float64
	for i := range r.cfg.coldStarts {
		d, err := coldStart(ctx, r.ps, r.clk, r.bin)
		if err != nil {
			r.res.fail(keyColdStart, fmt.Errorf("start %d: %w", i+1, err))
			return
		}
		ms = append(ms, float64(d.Microseconds())/1000)
	}
	r.res.set(keyColdStart, ms, nil)
	r.logf("cold start: median %.1f ms of %d (min %.1f ms)", median(ms), len(ms), minOf(ms))
}

// signingLoad is the signing benchmark as a load of the interleaved
// rounds: it runs right before the token endpoint's round, under the same
// conditions.
func (r *runner) signingLoad(ctx context.Context) (load, error) {
	testBin := filepath.Join(r.work, "idp.test")
	r.logf("building the signing benchmark (go test -c ./idp)")
	if err := buildSigningBench(ctx, r.root, testBin); err != nil {
		return load{}, err
	}
	return load{key: keySigning, measure: func(ctx context.Context, _ int, d time.Duration) (wrkResult, float64, error) {
		rate, cpu, err := signingRate(ctx, testBin, r.work, d)
		return wrkResult{RequestsPerSec: rate}, cpu, err
	}}, nil
}

// measureEndpoints runs the ceiling, an in-memory sandbox and a --data
// sandbox side by side and loads them in turn, round by round, so that a
// burst of load from elsewhere on the machine hits a figure and its ceiling
// alike.
func (r *runner) measureEndpoints(ctx context.Context) {
	ceiling, ceilingURL, err := r.ps.startCeiling(ctx, r.ceilingBin)
	if err != nil {
		r.res.fail(keyCeiling, err)
	}
	mem, err := r.ps.startSandbox(ctx, r.bin, 30*time.Second)
	if err != nil {
		for _, k := range []string{keyTrials, keyPing, keyToken, keyQualified, keyRSSIdle} {
			r.res.fail(k, err)
		}
	} else {
		r.measureIdleRSS(ctx, mem)
	}
	data, err := r.ps.startSandbox(ctx, r.bin, 30*time.Second, "--data", filepath.Join(r.work, "bench.db"))
	if err != nil {
		r.res.fail(keyQualifiedData, err)
	}
	var loads []load
	if ceilingURL != "" {
		loads = append(loads, load{key: keyCeiling, pid: ceiling.cmd.Process.Pid, job: fixedJob(wrkJob{url: ceilingURL + "/"})})
	}
	if mem != nil {
		loads = append(loads, r.sandboxLoads(ctx, mem, keyTrials, keyPing)...)
	}
	if sign, err := r.signingLoad(ctx); err != nil {
		r.res.fail(keySigning, err)
	} else {
		loads = append(loads, sign)
	}
	if mem != nil {
		loads = append(loads, r.sandboxLoads(ctx, mem, keyToken)...)
	}
	// The peer's token endpoint right after the sandbox's, in the same
	// rounds; without --peer (or node, or the package) it is left out.
	switch peer, err := r.peerLoad(ctx); {
	case errors.Is(err, errNoPeer):
		r.logf("peer token endpoint not measured: %v", err)
	case err != nil:
		r.res.fail(keyTokenPeer, err)
	default:
		loads = append(loads, peer)
	}
	if mem != nil {
		loads = append(loads, r.sandboxLoads(ctx, mem, keyQualified)...)
	}
	if data != nil {
		loads = append(loads, r.sandboxLoads(ctx, data, keyQualifiedData)...)
	}
	if r.cfg.shared {
		// In the same rounds as the embedded store's loads, so that the
		// ratios compare figures measured under the same conditions.
		for _, setup := range r.sharedSetups() {
			shared, done := r.sharedLoads(ctx, setup)
			defer done()
			loads = append(loads, shared...)
		}
	}
	r.runLoads(ctx, loads)
}

// redisBackend is a private Redis the shared-mode figures run a sandbox
// on: a single redis-server (redisServer) or a cluster (redisCluster).
type redisBackend interface {
	// sandboxArgs are the sandbox's flags that point it at this Redis.
	sandboxArgs() []string
	// commandsProcessed is the count of commands this Redis has run, over
	// every node.
	commandsProcessed(ctx context.Context) (int64, error)
	// close closes the clients; the processes end with the run's.
	close()
}

// sharedSetup is one Redis deployment the shared-mode figures measure: a
// directory under the run's for its data, what it is (in errors), how to
// start it there, and the figures measured on it.
type sharedSetup struct {
	dir, what string
	start     func(ctx context.Context, dir string) (redisBackend, error)
	keys      []string
}

// sharedSetups are the shared-mode deployments in the order their loads
// run: a single redis-server (--redis), then a Redis Cluster of
// clusterMasters masters (--redis-cluster).
func (r *runner) sharedSetups() []sharedSetup {
	return []sharedSetup{
		{dir: "redis", what: "redis", keys: []string{keyTrialsRedis, keyTokenRedis, keyQualRedis},
			start: func(ctx context.Context, dir string) (redisBackend, error) { return r.ps.startRedis(ctx, dir) }},
		{dir: "redis-cluster", what: "redis cluster", keys: []string{keyTrialsCluster, keyTokenCluster, keyQualCluster},
			start: func(ctx context.Context, dir string) (redisBackend, error) { return r.ps.startCluster(ctx, dir) }},
	}
}

// sharedLoads starts setup's Redis and one sandbox on it, and returns the
// loads of setup's figures, each counting the Redis commands of every
// node, and a function that closes the Redis clients. A failure to start
// either is recorded against every figure of setup.
func (r *runner) sharedLoads(ctx context.Context, setup sharedSetup) ([]load, func()) {
	fail := func(err error) ([]load, func()) {
		for _, k := range setup.keys {
			r.res.fail(k, err)
		}
		return nil, func() {}
	}
	dir := filepath.Join(r.work, setup.dir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fail(fmt.Errorf("%s directory: %w", setup.what, err))
	}
	// start's error is checked before its result is used: a failed start
	// returns a nil pointer in a non-nil interface.
	backend, err := setup.start(ctx, dir)
	if err != nil {
		return fail(err)
	}
	s, err := r.ps.startSandbox(ctx, r.bin, 30*time.Second, backend.sandboxArgs()...)
	if err != nil {
		backend.close()
		return fail(err)
	}
	loads := r.sandboxLoads(ctx, s, setup.keys...)
	for i := range loads {
		loads[i].redisCommands = backend.commandsProcessed
	}
	return loads, backend.close
}

// measureIdleRSS reads the resident memory of a sandbox that has just
// started and served nothing but its health check.
func (r *runner) measureIdleRSS(ctx context.Context, s *sandbox) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(500 * time.Millisecond):
	}
	rss, err := s.rssBytes()
	if err != nil {
		r.res.fail(keyRSSIdle, err)
		return
	}
	r.res.set(keyRSSIdle, []float64{float64(rss) / 1e6}, nil)
}

// measureListing generates two fixture sets (100 and cfg.listSize
// referrals of sandbox-partner), runs a sandbox on each, and loads the
// first page of the listing on both in turn.
func (r *runner) measureListing(ctx context.Context) {
	small, err := r.generate(ctx, 100)
	if err != nil {
		r.res.fail(keyList100, err)
		r.res.fail(keyList100k, err)
		r.res.fail(keyRSS100k, err)
		return
	}
	large, err := r.generate(ctx, r.cfg.listSize)
	if err != nil {
		r.res.fail(keyList100k, err)
		r.res.fail(keyRSS100k, err)
		return
	}
	var loads []load
	for _, l := range []struct{ key, dir string }{{keyList100, small}, {keyList100k, large}} {
		s, err := r.ps.startSandbox(ctx, r.bin, 2*time.Minute, "--fixtures", l.dir)
		if err != nil {
			r.res.fail(l.key, err)
			if l.key == keyList100k {
				r.res.fail(keyRSS100k, err)
			}
			continue
		}
		if l.key == keyList100k {
			if rss, err := s.rssBytes(); err != nil {
				r.res.fail(keyRSS100k, err)
			} else {
				r.res.set(keyRSS100k, []float64{float64(rss) / 1e6}, nil)
			}
		}
		loads = append(loads, r.sandboxLoads(ctx, s, l.key)...)
	}
	r.runLoads(ctx, loads)
}

// generate writes a fixtures directory with n referrals and no qualified
// ones, with the binary's own generator.
func (r *runner) generate(ctx context.Context, n int) (string, error) {
	dir := filepath.Join(r.work, fmt.Sprintf("fixtures-%d", n))
	r.logf("generating %d referrals", n)
	cmd := exec.CommandContext(ctx, r.bin, "fixtures", "generate", "--seed", "1",
		"--referrals", fmt.Sprint(n), "--qualified", "0", "--out", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("fixtures generate --referrals %d: %w\n%s", n, err, out)
	}
	return dir, nil
}

// load is one figure's wrk job; job is asked anew each round, so that a
// round can use fresh ids. before, when set, runs before each round.
// measure, when set, replaces wrk (the signing benchmark); such a load has
// no warm-up.
type load struct {
	measure func(ctx context.Context, round int, d time.Duration) (res wrkResult, cpuMicros float64, err error)
	key     string
	pid     int // the loaded server, whose CPU time per request is recorded
	job     func(round int) wrkJob
	before  func(ctx context.Context) error
	// redisCommands, when set (shared mode), reads Redis's command count
	// before and after each round, to record the commands per request.
	redisCommands func(ctx context.Context) (int64, error)
}

func fixedJob(j wrkJob) func(int) wrkJob { return func(int) wrkJob { return j } }

// sandboxLoads fetches a token from s and returns the loads of the given
// figures on it.
func (r *runner) sandboxLoads(ctx context.Context, s *sandbox, keys ...string) []load {
	token, err := fetchToken(ctx, s.base)
	if err != nil {
		for _, k := range keys {
			r.res.fail(k, err)
		}
		return nil
	}
	auth := []string{"Authorization: Bearer " + token}
	pid := s.cmd.Process.Pid
	var loads []load
	for _, k := range keys {
		switch k {
		case keyTrials, keyTrialsRedis, keyTrialsCluster:
			loads = append(loads, load{key: k, pid: pid, job: fixedJob(wrkJob{url: s.base + "/api/v1/referrals/trials", headers: auth})})
		case keyPing:
			loads = append(loads, load{key: k, pid: pid, job: fixedJob(wrkJob{url: s.base + "/health/ping", headers: auth})})
		case keyToken, keyTokenRedis, keyTokenCluster:
			script, err := r.script("token.lua")
			if err != nil {
				r.res.fail(k, err)
				continue
			}
			loads = append(loads, load{key: k, pid: pid, job: fixedJob(wrkJob{url: s.base + "/oauth2/v2.0/token", script: script})})
		case keyQualified, keyQualifiedData, keyQualRedis, keyQualCluster:
			script, err := r.script("qualified.lua")
			if err != nil {
				r.res.fail(k, err)
				continue
			}
			base := s.base
			loads = append(loads, load{
				key: k,
				pid: pid,
				job: func(round int) wrkJob {
					return wrkJob{url: base + "/api/v1/referrals/qualified", headers: auth, script: script,
						scriptArgs: []string{fmt.Sprintf("%s-r%d", k, round)}}
				},
				// Every round starts from the fixtures: the store (and,
				// in memory, the heap the collector scans) does not grow
				// from round to round.
				before: func(ctx context.Context) error { return resetSandbox(ctx, base) },
			})
		case keyList100, keyList100k:
			loads = append(loads, load{key: k, pid: pid, job: fixedJob(wrkJob{url: s.base + "/api/v1/referrals/?limit=50", headers: auth})})
		}
	}
	return loads
}

// script writes an embedded Lua script into the run's directory.
func (r *runner) script(name string) (string, error) {
	return r.embedded(luaScripts, "lua/"+name)
}

// embedded writes the embedded file at path into the run's directory and
// returns where.
func (r *runner) embedded(files embed.FS, path string) (string, error) {
	b, err := files.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("script %s: %w", path, err)
	}
	out := filepath.Join(r.work, filepath.Base(path))
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return "", fmt.Errorf("script %s: %w", path, err)
	}
	return out, nil
}

// runLoads warms each load up once, then runs cfg.rounds rounds of every
// load in turn. A load that fails is dropped with its error.
func (r *runner) runLoads(ctx context.Context, loads []load) {
	s := wrkSettings{threads: r.cfg.threads, connections: r.cfg.connections, duration: r.cfg.duration}
	rates := map[string][]float64{}
	p99s := map[string][]float64{}
	cpus := map[string][]float64{}
	cmds := map[string][]float64{}
	failed := map[string]bool{}
	// step runs one round of l and returns its result and the server's CPU
	// time per request in microseconds (0 when /proc cannot tell).
	step := func(l load, round int, d time.Duration) (wrkResult, float64, bool) {
		if l.before != nil {
			if err := l.before(ctx); err != nil {
				r.res.fail(l.key, err)
				failed[l.key] = true
				return wrkResult{}, 0, false
			}
		}
		if l.measure != nil {
			res, cpu, err := l.measure(ctx, round, d)
			if err != nil {
				r.res.fail(l.key, err)
				failed[l.key] = true
				return res, 0, false
			}
			return res, cpu, true
		}
		var cmdsBefore int64
		if l.redisCommands != nil {
			n, err := l.redisCommands(ctx)
			if err != nil {
				r.res.fail(l.key, err)
				failed[l.key] = true
				return wrkResult{}, 0, false
			}
			cmdsBefore = n
		}
		cpuBefore, cpuErr := cpuTime(l.pid)
		res, err := runWrk(ctx, s, l.job(round), d)
		if err != nil {
			r.res.fail(l.key, err)
			failed[l.key] = true
			return res, 0, false
		}
		if l.redisCommands != nil && res.Requests > 0 && round > 0 { // not the warm-up
			n, err := l.redisCommands(ctx)
			if err != nil {
				r.res.fail(l.key, err)
				failed[l.key] = true
				return res, 0, false
			}
			cmds[l.key] = append(cmds[l.key], float64(n-cmdsBefore)/float64(res.Requests))
		}
		cpuAfter, err := cpuTime(l.pid)
		if cpuErr != nil || err != nil || res.Requests == 0 {
			return res, 0, true
		}
		return res, float64((cpuAfter - cpuBefore).Microseconds()) / float64(res.Requests), true
	}
	if r.cfg.warmup > 0 {
		for _, l := range loads {
			if l.measure != nil {
				continue
			}
			r.logf("warm-up %s", l.key)
			step(l, 0, r.cfg.warmup)
		}
	}
	for round := 1; round <= r.cfg.rounds; round++ {
		for _, l := range loads {
			if failed[l.key] || ctx.Err() != nil {
				continue
			}
			res, cpu, ok := step(l, round, r.cfg.duration)
			if !ok {
				continue
			}
			rates[l.key] = append(rates[l.key], res.RequestsPerSec)
			p99s[l.key] = append(p99s[l.key], res.P99Ms)
			cpus[l.key] = append(cpus[l.key], cpu)
			r.logf("round %d/%d %-15s %10.0f /s  p99 %7.2f ms  server cpu %6.1f us/req", round, r.cfg.rounds, l.key, res.RequestsPerSec, res.P99Ms, cpu)
		}
	}
	for _, l := range loads {
		if !failed[l.key] && len(rates[l.key]) > 0 {
			r.res.set(l.key, rates[l.key], p99s[l.key])
			r.res.get(l.key).CPUMicrosPerReq = median(cpus[l.key])
			r.res.get(l.key).RedisCommandsPerReq = median(cmds[l.key])
		}
	}
}

// resetSandbox puts a sandbox back to its fixtures (POST /__sandbox/reset).
func resetSandbox(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/__sandbox/reset", strings.NewReader("{}"))
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	req.Header.Set("Content-Type", "application/json") // the admin API refuses other bodies
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("reset: status %d", resp.StatusCode)
	}
	return nil
}

// moduleRoot finds the directory of go.mod from the working directory up.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the module; run bench/run from the repository")
	}
	return filepath.Dir(mod), nil
}

// loadAverage is /proc/loadavg's first three fields, to tell a quiet
// machine from a busy one when comparing runs; "" where there is none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func minOf(xs []float64) float64 {
	m := 0.0
	for i, x := range xs {
		if i == 0 || x < m {
			m = x
		}
	}
	return m
}
