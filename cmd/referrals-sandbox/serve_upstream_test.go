package main

import (
	"context"
	"strings"
	"testing"
)

func TestServeUpstreamFlagsGoTogether(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // a serve that got past its checks stops at once
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--upstream", "https://real.example"},
		{"serve", "--addr", "127.0.0.1:0", "--upstream-auth-url", "https://login.example/tenant"},
	} {
		r := runCLIContext(ctx, nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "--upstream and --upstream-auth-url go together") {
			t.Errorf("%q: exit %d, stderr %s", args, r.code, r.stderr)
		}
	}
}
