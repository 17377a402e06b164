package main

import (
	"net/http/httptest"
	"testing"

	sb "github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestResetSandbox: the reset bench/run makes between figures is one the
// admin API accepts (it refuses a state change without a JSON body).
func TestResetSandbox(t *testing.T) {
	in, err := sb.Open(sb.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in.Server)
	t.Cleanup(func() { srv.Close(); _ = in.Close() })
	if err := resetSandbox(t.Context(), srv.URL); err != nil {
		t.Errorf("reset: %v", err)
	}
}
