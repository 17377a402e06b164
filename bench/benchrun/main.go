// Command benchrun is bench/run: it builds the sandbox, starts it on
// loopback and measures, in one run on this machine, each figure of issue 7
// against its ceiling (a bare net/http handler, RS256 signing), with wrk.
// It prints a table marking each target met or missed and writes the
// figures to bench/results.json, which the next run compares against.
// Shared mode (issue 16) is measured too: one sandbox on a private
// redis-server against the embedded store, and one on a private Redis
// Cluster of 3 masters against the single Redis, with Redis commands per
// request.
//
//	bench/run                 # 3 rounds of 5 s per figure (a few minutes)
//	bench/run --quick         # 1 round of 2 s: a smoke test
//	bench/run --strict        # exit 1 when a target is missed
//	bench/run --shared=false  # without redis-server: no shared-mode figures
//	bench/run --growth        # cost against size: 100 to 1,000,000 referrals
//	bench/run --only startup  # one step's figures, printed, not recorded
//	bench/run --render        # rewrite docs/benchmarks.md from results.json
//
// Every run is appended to bench/results.json (committed), and the
// generated tables of docs/benchmarks.md are rewritten from it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

// config is benchrun's flags.
type config struct {
	rounds      int
	duration    time.Duration
	warmup      time.Duration
	threads     int
	connections int
	coldStarts  int
	startups    int
	listSize    int
	out         string
	quick       bool
	strict      bool
	shared      bool
	docs        string
	render      bool
	growth      bool
	growthSizes []int
	// growthTimeout bounds each generation and each start of a growth
	// size, so that a slow start is recorded as such and the run ends.
	growthTimeout time.Duration
	// only names the steps to run (runner.steps); empty for every one. A
	// run of some steps is printed, not recorded: results.json holds
	// whole runs.
	only []string
	// bin, with only, is a sandbox binary to measure instead of building
	// the working tree's, to compare the builds of two commits.
	bin string
	// peer is a directory where oauth2-mock-server was installed with npm,
	// whose token endpoint is measured beside the sandbox's; "" for none.
	peer string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("bench/run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.rounds, "rounds", 3, "rounds per figure; the table shows their median")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "length of one wrk round (whole seconds)")
	fs.DurationVar(&c.warmup, "warmup", time.Second, "unmeasured wrk run before the first round of each figure; 0 for none")
	fs.IntVar(&c.threads, "threads", 2, "wrk threads (-t)")
	fs.IntVar(&c.connections, "connections", 50, "wrk connections (-c)")
	fs.IntVar(&c.coldStarts, "cold-starts", 20, "cold starts to take the median of")
	fs.IntVar(&c.startups, "startups", 15, "whole processes of serve (exec, healthy, SIGTERM, exit) to take the start-up medians of")
	only := fs.String("only", "", "run only these steps, separated by commas ("+strings.Join(stepNames(), ", ")+"), print their figures and record nothing")
	fs.StringVar(&c.bin, "bin", "", "with --only: measure this sandbox binary (a path from the repository's root, or absolute) instead of building the working tree's")
	fs.IntVar(&c.listSize, "list-size", 100000, "stored referrals of the large listing and memory figures")
	fs.StringVar(&c.out, "out", "bench/results.json", "where to write the results (read first, to compare with)")
	fs.BoolVar(&c.quick, "quick", false, "smoke test: 1 round of 2 s, no warm-up")
	fs.BoolVar(&c.shared, "shared", true, "also measure shared mode: one sandbox on a private redis-server, one on a private 3-master Redis Cluster (needs redis-server and redis-cli)")
	fs.BoolVar(&c.strict, "strict", false, "exit 1 when a target is missed, not only when a figure fails")
	fs.StringVar(&c.docs, "docs", "docs/benchmarks.md", "the document whose generated tables are rewritten from the results")
	fs.StringVar(&c.peer, "peer", "", "directory where `npm install oauth2-mock-server@9.3.0` was run: also measure that peer's token endpoint (needs node); empty: left out")
	fs.BoolVar(&c.render, "render", false, "measure nothing: only rewrite the generated tables from the results")
	fs.BoolVar(&c.growth, "growth", false, "measure cost against size (--growth-sizes) instead of the figures")
	sizes := fs.String("growth-sizes", "100,10000,100000,1000000", "referral counts of --growth, separated by commas")
	fs.DurationVar(&c.growthTimeout, "growth-timeout", 5*time.Minute, "bound on each generation and each start of a --growth size")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.growthSizes, err = parseSizes(*sizes); err != nil {
		return c, err
	}
	if c.only, err = parseSteps(*only); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.quick {
		c.rounds, c.duration, c.warmup = 1, 2*time.Second, 0
	}
	switch {
	case c.rounds < 1 || c.rounds > 100:
		return c, errors.New("--rounds must be 1 to 100")
	case c.duration < time.Second || c.duration > 10*time.Minute:
		return c, errors.New("--duration must be 1s to 10m")
	case c.warmup < 0 || c.warmup > time.Minute:
		return c, errors.New("--warmup must be 0 to 1m")
	case c.threads < 1 || c.connections < c.threads:
		return c, errors.New("--threads must be at least 1 and --connections at least --threads")
	case c.coldStarts < 1 || c.coldStarts > 1000:
		return c, errors.New("--cold-starts must be 1 to 1000")
	case c.startups < 1 || c.startups > 1000:
		return c, errors.New("--startups must be 1 to 1000")
	case c.bin != "" && len(c.only) == 0:
		return c, errors.New("--bin needs --only: results.json records the working tree's build")
	case len(c.only) > 0 && (c.growth || c.render):
		return c, errors.New("--only excludes --growth and --render")
	case c.listSize < 1:
		return c, errors.New("--list-size must be at least 1")
	case c.growthTimeout < time.Second:
		return c, errors.New("--growth-timeout must be at least 1s")
	}
	return c, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command; it returns the exit status: 0 when every figure
// was measured (and, with --strict, every target met), 1 otherwise, 2 for
// bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench/run:", err)
		return 2
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(stderr, "bench/run:", err)
		return 1
	}
	r := &runner{cfg: cfg, ps: newProcs(), clk: clock.Func(time.Now), root: root, log: stderr, res: results{}}
	hist, err := readHistory(r.outPath())
	if err != nil {
		fmt.Fprintln(stderr, "bench/run:", err)
		return 1
	}
	if cfg.render {
		return r.finish(hist, stdout, stderr)
	}
	if _, err := exec.LookPath("wrk"); err != nil && (cfg.growth || r.needsWrk()) {
		fmt.Fprintln(stderr, "bench/run: wrk is not installed; it generates the load.\n"+
			"  Debian/Ubuntu: sudo apt-get update && sudo apt-get install -y wrk\n"+
			"  macOS:         brew install wrk")
		return 1
	}
	defer r.ps.stopAll()
	if cfg.growth {
		rep, err := r.measureGrowth(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "bench/run:", err)
			return 1
		}
		hist.Growth = append(hist.Growth, rep)
		fmt.Fprint(stdout, renderGrowth(hist))
		return r.finish(hist, stdout, stderr)
	}
	rep, err := r.measure(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "bench/run:", err)
		return 1
	}
	prev, _ := hist.latest()
	if err := writeTable(stdout, rep, prev); err != nil {
		fmt.Fprintln(stderr, "bench/run:", err)
		return 1
	}
	if len(cfg.only) > 0 {
		fmt.Fprintf(stdout, "\n--only: not recorded in %s\n", r.outPath())
	} else {
		hist.Runs = append(hist.Runs, rep)
		if code := r.finish(hist, stdout, stderr); code != 0 {
			return code
		}
	}
	targetsMissed, errs := missed(rep.Results)
	switch {
	case errs > 0:
		fmt.Fprintf(stderr, "bench/run: %d figure(s) could not be measured\n", errs)
		return 1
	case targetsMissed > 0 && cfg.strict:
		fmt.Fprintf(stderr, "bench/run: %d target(s) missed\n", targetsMissed)
		return 1
	}
	return 0
}

// finish writes the history and the generated tables.
func (r *runner) finish(hist History, stdout, stderr io.Writer) int {
	if !r.cfg.render {
		if err := writeHistory(r.outPath(), hist); err != nil {
			fmt.Fprintln(stderr, "bench/run:", err)
			return 1
		}
		fmt.Fprintf(stdout, "\nappended to %s\n", r.outPath())
	}
	docs := r.cfg.docs
	if !filepath.IsAbs(docs) {
		docs = filepath.Join(r.root, docs)
	}
	if err := writeDoc(docs, hist); err != nil {
		fmt.Fprintln(stderr, "bench/run:", err)
		return 1
	}
	fmt.Fprintf(stdout, "tables rewritten in %s\n", docs)
	return 0
}
