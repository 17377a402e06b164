package sandbox

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// shareScenarios moves the failure rules into Redis in shared mode
// (cfg.Redis set): every replica then counts times, after and per-client
// tallies against the same rules. The start-up activations of
// cfg.Scenarios are carried over.
func shareScenarios(cfg *Config) error {
	if cfg.Redis == nil {
		return nil
	}
	shared, err := cfg.Scenarios.Shared(cfg.Redis, cfg.RedisPrefix, sharedSettle)
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

// sharedUnavailable answers a change the shared state (Redis) could not
// take: 503 with Retry-After, so the caller retries instead of believing
// the change was made or was invalid.
func (s *Server) sharedUnavailable(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(scenarios.DefaultRetryAfter)))
	s.problem(w, r, newProblem(http.StatusServiceUnavailable, "the shared state (Redis) is unavailable; nothing was read or changed, retry after the Retry-After delay"))
}

// sharedDown answers 503 (see sharedUnavailable) and returns true when the
// rules or the journal cannot be reached: their read methods report no
// error, and an empty list or a 404 would be a false answer.
func (s *Server) sharedDown(w http.ResponseWriter, r *http.Request) bool {
	if s.scenarios.Reachable() == nil && s.journal.Reachable() == nil {
		return false
	}
	s.sharedUnavailable(w, r)
	return true
}
