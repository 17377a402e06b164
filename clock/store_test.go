package clock_test

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/clock/clocktest"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

func TestMemoryStore(t *testing.T) {
	clocktest.Run(t, func(_ *testing.T, clocks *clock.PerClient) clock.Store { return clock.NewMemory(clocks) })
}

func TestRedisStore(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.NewClient(t)
	n := 0
	clocktest.Run(t, func(_ *testing.T, clocks *clock.PerClient) clock.Store {
		n++
		return clock.NewRedis(rdb, clock.NewRedisKeys("test"+string(rune('a'+n))+":"), clocks)
	})
}
