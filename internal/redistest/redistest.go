// Package redistest starts a private redis-server for a test: on a free
// loopback port, in the test's temporary directory, stopped when the test
// ends. Tests of the shared mode (--redis) use it; it skips the test when
// redis-server is not installed, unless REDIS_REQUIRED is set (as .ci/run
// sets it), so CI can never pass by skipping.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Server is one running redis-server.
type Server struct {
	// Addr is its host:port on loopback.
	Addr string
	// URL is its redis:// URL, as --redis takes it.
	URL string

	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
	dir    string
	ownDir bool // StartMain made dir; Close removes it
	args   []string
}

// Start runs a redis-server for t with AOF on (appendfsync always, so a
// kill loses nothing it acknowledged) and stops it at t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if Required() {
			t.Fatalf("redistest: redis-server is not installed and REDIS_REQUIRED is set: %v", err)
		}
		t.Skip("redistest: redis-server is not installed (apt-get install redis-server; .ci/run installs it)")
	}
	s, err := startOnFreePorts(bin, func() (*Server, error) {
		return newServer(t.TempDir(), "--appendonly", "yes", "--appendfsync", "always")
	})
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(func() { s.Stop(t) })
	return s
}

// Installed reports whether redis-server is on the PATH.
func Installed() bool {
	_, err := exec.LookPath("redis-server")
	return err == nil
}

// Required reports whether REDIS_REQUIRED is set, as .ci/run sets it: a
// missing redis-server then fails the tests that need one instead of
// skipping them.
func Required() bool { return os.Getenv("REDIS_REQUIRED") != "" }

// StartMain runs a redis-server without persistence (fast, and nothing to
// recover) in a new directory under dir, for a TestMain that shares one
// server between its package's tests, each under a key prefix of its own.
// The caller stops it with Close.
func StartMain(dir string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server is not installed: %w", err)
	}
	dir, err = os.MkdirTemp(dir, "redistest")
	if err != nil {
		return nil, fmt.Errorf("redis directory: %w", err)
	}
	s, err := startOnFreePorts(bin, func() (*Server, error) { return newServer(dir, "--appendonly", "no") })
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	s.ownDir = true
	return s, nil
}

// newServer prepares a server on a free port, keeping its files in dir,
// with persistence as the extra arguments say.
func newServer(dir string, persistence ...string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return newServerOn(dir, port, persistence...), nil
}

// newServerOn prepares a server on port, keeping its files in dir.
func newServerOn(dir string, port int, persistence ...string) *Server {
	s := &Server{dir: dir}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.URL = "redis://" + s.Addr + "/0"
	s.args = append([]string{
		"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", s.dir, "--save", "",
		"--protected-mode", "yes", "--daemonize", "no", "--logfile", filepath.Join(s.dir, "redis.log"),
	}, persistence...)
	return s
}

// portAttempts bounds how often startOnFreePorts tries new ports.
const portAttempts = 5

// startOnFreePorts starts the server build prepares, on ports free when it
// chose them; when another process took one in between (redis-server
// exits saying the address is in use), it starts a new one on other ports.
// A free port is only free until someone binds it: a ./test run met a
// cluster node whose bus port had gone.
func startOnFreePorts(bin string, build func() (*Server, error)) (*Server, error) {
	var err error
	for range portAttempts {
		var s *Server
		if s, err = build(); err != nil {
			return nil, err
		}
		if err = s.start(bin); err == nil {
			return s, nil
		}
		if !strings.Contains(err.Error(), "Address already in use") {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%d attempts on new ports: %w", portAttempts, err)
}

func (s *Server) start(bin string) error {
	s.cmd = exec.Command(bin, s.args...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	s.exited = make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ping(s.Addr) == nil {
			return nil
		}
		select {
		case <-s.exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			s.cmd = nil
			return fmt.Errorf("redis-server on %s exited at start; its log:\n%s", s.Addr, log)
		case <-time.After(20 * time.Millisecond): // polling: redis-server gives no ready signal
		}
	}
	log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	s.stop()
	return fmt.Errorf("redis-server on %s did not answer PING within 10s; its log:\n%s", s.Addr, log)
}

// Stop stops the server (SIGTERM, then SIGKILL); stopping twice is fine.
// Its data stays in the directory, so Restart brings it back.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.stop()
}

// Close stops a server StartMain started and removes its directory.
func (s *Server) Close() error {
	s.stop()
	if !s.ownDir {
		return nil
	}
	return os.RemoveAll(s.dir)
}

func (s *Server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Restart starts the server again on the same port and data directory,
// after Stop: the shared mode's recovery is tested this way.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	if err := s.start(bin); err != nil {
		t.Fatalf("redistest: %v", err)
	}
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ping sends an inline PING and waits for +PONG, without a client library.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}
