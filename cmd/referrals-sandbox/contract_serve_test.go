package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeStopsWhileLoadingAContract: a signal (here, the context ending)
// that arrives while the contract loads stops serve before it is ready,
// saying so, instead of being ignored until the sandbox has started.
func TestServeStopsWhileLoadingAContract(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res := runCLIContext(ctx, nil, "serve", "--addr", "127.0.0.1:0", "--contract", filepath.Join(contractsDir, "birthdate.yaml"))
	if res.code != 0 {
		t.Errorf("exit %d, want 0 (stopped as asked); stderr %s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "stopped before ready") || !strings.Contains(res.stderr, "loading stopped: context canceled") {
		t.Errorf("stderr does not say the load stopped:\n%s", res.stderr)
	}
	if strings.Contains(res.stderr, "referrals-sandbox ready") {
		t.Errorf("the sandbox became ready although told to stop while loading:\n%s", res.stderr)
	}
}
