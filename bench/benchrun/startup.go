package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

// startupLimit bounds one start to healthy, and startupStopLimit the stop
// after it: far beyond any healthy start, short enough that a hung binary
// cannot stall the run.
const (
	startupLimit     = 10 * time.Second
	startupStopLimit = 10 * time.Second
)

// startupRun is one whole process of `referrals-sandbox serve`: started,
// asked for /__sandbox/health until it answers 200, stopped with SIGTERM.
type startupRun struct {
	wall    time.Duration // exec to the first 200
	cpu     time.Duration // user plus system time of the whole process
	peakRSS int64         // bytes: the most it held resident, start to exit
}

// startupEnv is the whole environment of a measured start: only HOME,
// a directory of the run's, so that the kept CA of the default HTTPS is
// the same for every start and no SANDBOX_*, OTEL_* or GO* variable of
// the caller's changes what is measured.
func startupEnv(home string) []string { return []string{"HOME=" + home} }

// startupOnce runs the binary as a partner does, `serve` with no flag but
// a free port, and measures it. A port another process took between
// freePort and the bind is retried with another, three times at most.
func startupOnce(ctx context.Context, ps *procs, clk clock.Clock, bin, home string) (startupRun, error) {
	var lastErr error
	for range 3 {
		run, portTaken, err := startupOnPort(ctx, ps, clk, bin, home)
		if !portTaken {
			return run, err
		}
		lastErr = err
	}
	return startupRun{}, lastErr
}

// startupOnPort is one attempt of startupOnce; portTaken reports a
// failure to bind the port, which another attempt may not have.
func startupOnPort(ctx context.Context, ps *procs, clk clock.Clock, bin, home string) (run startupRun, portTaken bool, err error) {
	port, err := freePort()
	if err != nil {
		return run, false, err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	// No keep-alive: every poll is a new connection, as the first request
	// of a client would be.
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:"+strconv.Itoa(port))
	cmd.Env = startupEnv(home)
	cmd.Stdout = io.Discard
	start := clk.Now()
	p, err := ps.start(cmd)
	if err != nil {
		return run, false, err
	}
	for {
		if ok, _ := healthy(ctx, client, base); ok {
			run.wall = clk.Now().Sub(start)
			break
		}
		if ctx.Err() != nil {
			ps.stop(p)
			return run, false, ctx.Err()
		}
		if p.exited() {
			msg := p.stderr.String()
			ps.stop(p)
			return run, strings.Contains(msg, "address already in use"), fmt.Errorf("the sandbox exited during start: %s", msg)
		}
		if clk.Now().Sub(start) > startupLimit {
			ps.stop(p)
			return run, false, fmt.Errorf("no 200 from /__sandbox/health within %s", startupLimit)
		}
		time.Sleep(time.Millisecond)
	}
	client.CloseIdleConnections()
	if err := ps.terminate(p, startupStopLimit); err != nil {
		return run, false, err
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		return run, false, fmt.Errorf("exit status %d after SIGTERM: %s", code, p.stderr)
	}
	run.cpu, run.peakRSS, err = processUsage(p.cmd.ProcessState)
	return run, false, err
}

// measureStartup starts the binary cfg.startups times, one after another,
// and records the medians of the three start-up figures. One unmeasured
// start comes first: it makes the kept CA in the run's HOME, which every
// later start reuses, as every start of a partner's but the first does.
func (r *runner) measureStartup(ctx context.Context) {
	keys := []string{keyStartupWall, keyStartupCPU, keyStartupRSS}
	fail := func(err error) {
		for _, k := range keys {
			r.res.fail(k, err)
		}
	}
	home := filepath.Join(r.work, "startup-home")
	if err := os.Mkdir(home, 0o700); err != nil {
		fail(fmt.Errorf("start-up HOME: %w", err))
		return
	}
	if _, err := startupOnce(ctx, r.ps, r.clk, r.bin, home); err != nil {
		fail(fmt.Errorf("first start (makes the kept CA): %w", err))
		return
	}
	var wall, cpu, rss []float64
	for i := range r.cfg.startups {
		run, err := startupOnce(ctx, r.ps, r.clk, r.bin, home)
		if err != nil {
			fail(fmt.Errorf("start %d: %w", i+1, err))
			return
		}
		wall = append(wall, millis(run.wall))
		cpu = append(cpu, millis(run.cpu))
		rss = append(rss, float64(run.peakRSS)/(1<<20))
	}
	r.res.set(keyStartupWall, wall, nil)
	r.res.set(keyStartupCPU, cpu, nil)
	r.res.set(keyStartupRSS, rss, nil)
	r.logf("start-up: median %.1f ms to healthy, %.1f ms of CPU, %.1f MiB at peak, of %d starts",
		median(wall), median(cpu), median(rss), len(wall))
}

// millis is d in milliseconds, with microseconds kept.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
