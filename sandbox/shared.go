package sandbox

import (
	"context"
	"fmt"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// shareScenarios moves the failure rules and the scenarios saved at run
// time into Redis in shared mode (cfg.Redis set): every replica then counts
// times, after and per-client tallies against the same rules, and knows
// every scenario saved through any of them. The start-up activations of
// cfg.Scenarios are carried over; the library's own scenarios (embedded,
// --scenarios-dir, --scenario FILE) stay in each process, the same on
// every replica.
func shareScenarios(cfg *Config) error {
	if cfg.Redis == nil {
		return nil
	}
	cfg.Library.UseSaved(scenarios.NewRedisSaved(cfg.Redis, cfg.RedisPrefix))
	local, ok := cfg.Scenarios.(*scenarios.MemoryEngine)
	if !ok {
		return nil // already shared
	}
	shared, err := local.Shared(context.Background(), cfg.Redis, cfg.RedisPrefix, sharedSettle)
	if err != nil {
		return fmt.Errorf("sandbox: shared mode: %w", err)
	}
	cfg.Scenarios = shared
	return nil
}

// newJournal is the request journal: a capped Redis stream shared by the
// replicas in shared mode, so the journal and the conformance report through
// any replica show the calls made through all of them; in memory otherwise.
func newJournal(cfg Config) journal.Log {
	if cfg.Redis != nil {
		return journal.NewRedis(cfg.Redis, cfg.RedisPrefix, cfg.JournalSize, cfg.JournalBytes)
	}
	return journal.NewBounded(cfg.JournalSize, cfg.JournalBytes)
}

// rulesVersionKey is the Redis key of the shared rules' version, read with
// the per-request state (see shared_sync.go); "" for in-memory rules.
func rulesVersionKey(e scenarios.Engine) string {
	if shared, ok := e.(*scenarios.RedisEngine); ok {
		return shared.VersionKey()
	}
	return ""
}
