// Command profile runs the sandbox in-process on loopback, puts one
// endpoint under wrk load, and writes a CPU profile (and a heap profile)
// of the server for `go tool pprof`: the way to find out why a figure of
// bench/run misses its target.
//
//	go run ./bench/profile --target trials --out /tmp/trials
//	go tool pprof -top /tmp/trials.cpu.pprof
//
// With --redis URL the sandbox runs in shared mode on that (running) Redis.
//
// With --startup it profiles start-up instead (no wrk): the opening of the
// sandbox on --fixtures and --data, and what stays live after it.
//
//	go run ./bench/profile --startup --data /tmp/growth.db --out /tmp/start
//	go tool pprof -sample_index=inuse_space -top /tmp/start.heap.pprof
//
// It builds the sandbox with sandbox.Open and the binary's own HTTP server
// (sandbox.NewHTTPServer), with the options bench/run gives the binary:
// no rate limit, warn-level JSON logging.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
)

// targets maps a target name to its path and, for POSTs, the bench/run
// Lua script that shapes the request.
func targets() map[string]struct{ path, script string } {
	return map[string]struct{ path, script string }{
		"trials":    {"/api/v1/referrals/trials", ""},
		"ping":      {"/health/ping", ""},
		"token":     {"/oauth2/v2.0/token", "bench/benchrun/lua/token.lua"},
		"qualified": {"/api/v1/referrals/qualified", "bench/benchrun/lua/qualified.lua"},
		"list":      {"/api/v1/referrals/?limit=50", ""},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "profile:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	target := fs.String("target", "trials", "what to load: trials, ping, token, qualified or list")
	duration := fs.Duration("duration", 10*time.Second, "length of the profiled wrk run")
	out := fs.String("out", "profile", "output prefix: writes PREFIX.cpu.pprof and PREFIX.heap.pprof")
	fixturesDir := fs.String("fixtures", "", "fixtures directory (e.g. from `referrals-sandbox fixtures generate`); default embedded")
	dataFile := fs.String("data", "", "buntdb data file; default in memory")
	redisURL := fs.String("redis", "", "shared mode: a running Redis (redis://host:port/db) to keep the state in")
	conns := fs.Int("connections", 50, "wrk connections")
	threads := fs.Int("threads", 2, "wrk threads")
	startup := fs.Bool("startup", false, "profile start-up (opening the sandbox) and the heap live after it, instead of a load")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *startup {
		return profileStartup(sandbox.Config{FixturesDir: *fixturesDir, DataFile: *dataFile, Redis: backend.RedisConfig{URL: *redisURL}}, *out)
	}
	tg, ok := targets()[*target]
	if !ok {
		return fmt.Errorf("unknown --target %q", *target)
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		return errors.New("wrk is not installed (apt-get install -y wrk)")
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	in, err := sandbox.Open(sandbox.Config{FixturesDir: *fixturesDir, DataFile: *dataFile, Logger: logger, Redis: backend.RedisConfig{URL: *redisURL}})
	if err != nil {
		return fmt.Errorf("open the sandbox: %w", err)
	}
	defer in.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := sandbox.NewHTTPServer(in.Server, logger)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	token, err := fetchToken(ctx, base)
	if err != nil {
		return err
	}

	wrkArgs := []string{"-t" + strconv.Itoa(*threads), "-c" + strconv.Itoa(*conns),
		"-d" + strconv.Itoa(max(1, int(duration.Seconds()))) + "s", "--latency"}
	// The token endpoint authenticates the client from the form; a bearer
	// header there would be read as (wrong) client credentials.
	if *target != "token" {
		wrkArgs = append(wrkArgs, "-H", "Authorization: Bearer "+token)
	}
	if tg.script != "" {
		script, err := wrkScript(tg.script)
		if err != nil {
			return fmt.Errorf("the %s target: %w", *target, err)
		}
		wrkArgs = append(wrkArgs, "-s", script)
	}
	wrkArgs = append(wrkArgs, base+tg.path, "--", "profile-"+strconv.FormatInt(int64(os.Getpid()), 10))

	cpu, err := os.Create(*out + ".cpu.pprof")
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer cpu.Close()
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	cmd := exec.CommandContext(ctx, "wrk", wrkArgs...)
	cmd.Dir = moduleRoot()
	cmd.Stderr = os.Stderr
	wrkOut, wrkErr := cmd.Output()
	pprof.StopCPUProfile()
	os.Stdout.Write(wrkOut)
	if wrkErr != nil {
		return fmt.Errorf("wrk: %w", wrkErr)
	}
	if strings.Contains(string(wrkOut), "Non-2xx") {
		return errors.New("some answers were not 2xx: the profile shows the error path, not the endpoint")
	}
	runtime.GC()
	heap, err := os.Create(*out + ".heap.pprof")
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	defer heap.Close()
	if err := pprof.Lookup("allocs").WriteTo(heap, 0); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	fmt.Printf("\nwrote %s.cpu.pprof and %s.heap.pprof (allocations); e.g. go tool pprof -top %s.cpu.pprof\n", *out, *out, *out)
	return nil
}

// fetchToken gets a token of sandbox-partner (public test credentials).
func fetchToken(ctx context.Context, base string) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"sandbox-partner"},
		"client_secret": {"sandbox-partner-secret"}, "scope": {"api://referrals-sandbox/.default"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/oauth2/v2.0/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("token request: status %d, %v: %s", resp.StatusCode, err, b)
	}
	const key = `"access_token":"`
	i := strings.Index(string(b), key)
	if i < 0 {
		return "", fmt.Errorf("no access_token in %s", b)
	}
	rest := string(b)[i+len(key):]
	return rest[:strings.IndexByte(rest, '"')], nil
}

// wrkScript is the path of a target's Lua script (rel, from the module's
// root). wrk given a script it cannot open sends plain GETs instead, which
// for the qualified target profiled the listing, not the POST: a script
// that is not there is an error.
func wrkScript(rel string) (string, error) {
	script := filepath.Join(moduleRoot(), rel)
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("wrk script: %w (run from within the module)", err)
	}
	return script, nil
}

// moduleRoot is where the Lua script paths are relative to: the module
// root, found from this source file's package directory at run time via
// the working directory (go run runs in the caller's directory).
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for range 10 {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		dir = filepath.Dir(dir)
	}
	return "."
}
