package ratelimit_test

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit/ratelimittest"
)

func TestMemory(t *testing.T) {
	ratelimittest.Run(t, func(*testing.T) ratelimit.Store { return ratelimit.NewMemory() })
}

func TestRedis(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.NewClient(t)
	n := 0
	ratelimittest.Run(t, func(*testing.T) ratelimit.Store {
		n++ // each subtest its own prefix on one server
		return ratelimit.NewRedis(rdb, "test"+string(rune('a'+n))+":ratelimit:")
	})
}
