package redistest

import "testing"

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
