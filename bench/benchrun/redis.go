package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a private redis-server of the run: loopback only, its
// data in the run's directory, with the persistence docs/shared-mode.md recommends
// for a team's shared sandbox (AOF, appendfsync always), so that the
// shared-mode figures include the fsync a real deployment pays.
type redisServer struct {
	*proc
	addr, url string
	client    *redis.Client
}

// startRedis starts redis-server on a free loopback port, with extra
// arguments (a cluster node's), and waits (10 s at most) until it answers
// PING.
func (ps *procs) startRedis(ctx context.Context, dir string, extra ...string) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redis-server is not installed (apt-get install -y redis-server), " +
			"or pass --shared=false to skip the shared-mode figures")
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{
		"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--protected-mode", "yes", "--daemonize", "no", "--logfile", ""}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout = io.Discard
	p, err := ps.start(cmd)
	if err != nil {
		return nil, err
	}
	s := &redisServer{proc: p, addr: addr, url: "redis://" + addr + "/0",
		client: redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pingCtx, cancel := context.WithTimeout(ctx, time.Second)
		err = s.client.Ping(pingCtx).Err()
		cancel()
		if err == nil {
			return s, nil
		}
		if p.exited() || ctx.Err() != nil || time.Now().After(deadline) {
			_ = s.client.Close()
			ps.stop(p)
			return nil, fmt.Errorf("redis-server on %s did not answer PING: %w %s", addr, err, p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// commandsProcessed is Redis's total_commands_processed: the difference
// over a round, divided by the round's requests, is the Redis commands
// each request cost (the INFO call itself adds one per reading).
func (s *redisServer) commandsProcessed(ctx context.Context) (int64, error) {
	info, err := s.client.Info(ctx, "stats").Result()
	if err != nil {
		return 0, fmt.Errorf("redis INFO stats: %w", err)
	}
	return parseInfoField(strings.NewReader(info), "total_commands_processed")
}

// sandboxArgs points a sandbox at this server (--redis).
func (s *redisServer) sandboxArgs() []string { return []string{"--redis", s.url} }

// close closes the client; the process ends with the run's.
func (s *redisServer) close() { _ = s.client.Close() }

// parseInfoField finds "field:value" in the text of Redis's INFO command
// and returns value as an integer.
func parseInfoField(r io.Reader, field string) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok || name != field {
			continue
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("redis INFO %s %q: %w", field, value, err)
		}
		return n, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read redis INFO: %w", err)
	}
	return 0, fmt.Errorf("redis INFO has no %s line", field)
}
