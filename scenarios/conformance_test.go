package scenarios_test

import (
	"context"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios/rulestest"
)

func TestMemoryEngineConformance(t *testing.T) {
	rulestest.Run(t, func(t *testing.T, cfg scenarios.Config) scenarios.Engine { return scenarios.New(cfg) })
}

// TestRedisEngineConformance runs the suite on one private Redis, emptied
// before each test.
func TestRedisEngineConformance(t *testing.T) {
	rdb := redistest.Start(t).NewClient(t)
	rulestest.Run(t, func(t *testing.T, cfg scenarios.Config) scenarios.Engine {
		t.Helper()
		if err := rdb.FlushDB(context.Background()).Err(); err != nil {
			t.Fatalf("FLUSHDB: %v", err)
		}
		return scenarios.NewRedis(rdb, "sandbox:", 0, cfg)
	})
}
