package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

// TestMain lets this test binary stand in for the sandbox: run as
// `serve --addr ADDR` (as startupOnce runs it), it answers
// /__sandbox/health until SIGTERM.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "serve" && os.Args[2] == "--addr" {
		os.Exit(fakeSandbox(os.Args[3]))
	}
	os.Exit(m.Run())
}

func fakeSandbox(addr string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return 1
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/__sandbox/health" || os.Getenv("HOME") == "" {
			http.NotFound(w, r)
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	<-ctx.Done()
	if err := srv.Shutdown(context.Background()); err != nil {
		return 1
	}
	return 0
}

// TestStartupOnce: a start is measured from exec to healthy, stopped with
// SIGTERM, and its CPU time and peak memory read from its rusage.
func TestStartupOnce(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ps := newProcs()
	t.Cleanup(ps.stopAll)
	run, err := startupOnce(t.Context(), ps, clock.Func(time.Now), self, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if run.wall <= 0 || run.cpu <= 0 || run.peakRSS < 1<<20 {
		t.Errorf("startupOnce = %+v, want a positive wall and CPU time and a peak of at least 1 MiB", run)
	}
	if len(ps.running) != 0 {
		t.Errorf("%d process(es) still tracked after the start was measured", len(ps.running))
	}
}

// TestStartupOnceReportsAFailedStart: a binary that exits before it is
// healthy is an error that says so, not a figure.
func TestStartupOnceReportsAFailedStart(t *testing.T) {
	_, err := startupOnce(t.Context(), newProcs(), clock.Func(time.Now), "/bin/false", t.TempDir())
	if err == nil {
		t.Fatal("a start that exited at once was measured")
	}
	if !strings.Contains(err.Error(), "exited during start") {
		t.Errorf("err = %v, want the exit reported", err)
	}
}
