package redistest

import (
	"syscall"
	"testing"
)

// Freeze stops the server process (SIGSTOP) until Thaw: unlike CLIENT
// PAUSE, a frozen Redis reads nothing, so a command whose client gave up
// and closed the connection is still in the socket when it resumes, and
// runs, as after a long stall of the machine or a full disk.
func (s *Server) Freeze(t testing.TB) {
	t.Helper()
	s.signal(t, syscall.SIGSTOP)
}

// Thaw resumes a server Freeze stopped (SIGCONT).
func (s *Server) Thaw(t testing.TB) {
	t.Helper()
	s.signal(t, syscall.SIGCONT)
}

func (s *Server) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if s.cmd == nil || s.cmd.Process == nil {
		t.Fatalf("redistest: signal %v: the server is not running", sig)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("redistest: signal %v: %v", sig, err)
	}
}
