package redistest

import (
	"os"
	"testing"
)

func TestStartStopRestart(t *testing.T) {
	s := Start(t)
	if err := ping(s.Addr); err != nil {
		t.Fatalf("started server: %v", err)
	}
	s.Stop(t)
	if err := ping(s.Addr); err == nil {
		t.Fatal("stopped server still answers")
	}
	s.Restart(t)
	if err := ping(s.Addr); err != nil {
		t.Fatalf("restarted server: %v", err)
	}
}

func TestStartMainAndClose(t *testing.T) {
	if !Installed() {
		if Required() {
			t.Fatal("redis-server is not installed and REDIS_REQUIRED is set")
		}
		t.Skip("redis-server is not installed")
	}
	parent := t.TempDir()
	s, err := StartMain(parent)
	if err != nil {
		t.Fatal(err)
	}
	if err := ping(s.Addr); err != nil {
		t.Fatalf("started server: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := ping(s.Addr); err == nil {
		t.Fatal("closed server still answers")
	}
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Errorf("Close left %d files in the directory", len(left))
	}
}
