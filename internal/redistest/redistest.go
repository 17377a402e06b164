// Package redistest starts a private redis-server for a test: on a free
// loopback port, in the test's temporary directory, stopped when the test
// ends. Tests of the shared mode (--redis) use it; it skips the test when
// redis-server is not installed, unless REDIS_REQUIRED is set (as .ci/run
// sets it), so CI can never pass by skipping.
package redistest

import (
	"bufio"
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

	cmd  *exec.Cmd
	dir  string
	args []string
}

// Start runs a redis-server for t with AOF on (appendfsync always, so a
// kill loses nothing it acknowledged) and stops it at t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("REDIS_REQUIRED") != "" {
			t.Fatalf("redistest: redis-server is not installed and REDIS_REQUIRED is set: %v", err)
		}
		t.Skip("redistest: redis-server is not installed (apt-get install redis-server; .ci/run installs it)")
	}
	s := &Server{dir: t.TempDir()}
	port, err := freePort()
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.URL = "redis://" + s.Addr + "/0"
	s.args = []string{
		"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", s.dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--protected-mode", "yes", "--daemonize", "no", "--logfile", filepath.Join(s.dir, "redis.log"),
	}
	s.start(t, bin)
	t.Cleanup(func() { s.Stop(t) })
	return s
}

func (s *Server) start(t testing.TB, bin string) {
	t.Helper()
	s.cmd = exec.Command(bin, s.args...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("redistest: start redis-server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ping(s.Addr) == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	t.Fatalf("redistest: redis-server on %s did not answer PING within 10s; its log:\n%s", s.Addr, log)
}

// Stop stops the server (SIGTERM, then SIGKILL); stopping twice is fine.
// Its data stays in the directory, so Restart brings it back.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
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
	s.start(t, bin)
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
