package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

// coldStartLimit bounds one start: far beyond any healthy start, short
// enough that a hung binary cannot stall the run.
const coldStartLimit = 10 * time.Second

// coldStart execs the binary with the default (embedded) fixtures and
// measures the time from exec to the first 200 from /__sandbox/health,
// polling with a fresh connection every millisecond. The process is killed
// as soon as it has answered.
func coldStart(ctx context.Context, ps *procs, clk clock.Clock, bin string) (time.Duration, error) {
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	// No keep-alive: every poll is a new connection, as the first request
	// of a client would be.
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	cmd := exec.CommandContext(ctx, bin, sandboxArgs(port)...)
	cmd.Stdout = io.Discard
	start := clk.Now()
	p, err := ps.start(cmd)
	if err != nil {
		return 0, err
	}
	defer ps.stop(p)
	for clk.Now().Sub(start) < coldStartLimit {
		if ok, _ := healthy(ctx, client, base); ok {
			return clk.Now().Sub(start), nil
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if p.exited() {
			return 0, fmt.Errorf("the sandbox exited during start: %s", p.stderr)
		}
		time.Sleep(time.Millisecond)
	}
	return 0, fmt.Errorf("no 200 from /__sandbox/health within %s", coldStartLimit)
}
