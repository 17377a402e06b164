// Package backendtest runs every conformance suite of a sandbox's state on
// the parts of backends: the record store, the journal, the clocks, the
// failure rules, the saved scenarios, the rate limit buckets and the
// runtime clients. The suites of the parts' own packages check each
// implementation on its own; this one checks that a backend, memory or
// Redis or a Redis Cluster, wires each part as the suite expects it, with
// the settings its Config gives.
//
// It is part of the module's tests; it is not a stable API.
package backendtest

import (
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/clock/clocktest"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/idp/clientstest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal/journaltest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit/ratelimittest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store/storetest"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios/rulestest"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios/savedtest"
)

// Opener returns a new backend built from cfg, with nothing in it: the
// caller adds where it lives (cfg.Redis, a prefix of its own for each
// call) and closes it when t ends. Each suite's test opens its own.
type Opener func(t *testing.T, cfg backend.Config) *backend.Backend

// Run runs every part's suite, each as a subtest named after the part, on
// the backends open builds.
func Run(t *testing.T, open Opener) {
	t.Helper()
	t.Run("Records", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store { return records{open(t, config()).Records} })
		t.Run("Quota", func(t *testing.T) {
			storetest.RunQuota(t, func(t *testing.T, q store.Quota) store.Store {
				cfg := config()
				cfg.Quota = q
				return records{open(t, cfg).Records}
			})
		})
	})
	t.Run("Journal", func(t *testing.T) { journaltest.Run(t, open.journal, open.journalCheckEvery(t)) })
	t.Run("Clocks", func(t *testing.T) {
		clocktest.RunOver(t, func(t *testing.T, sandbox *clock.Adjustable) (clock.Store, *clock.PerClient) {
			cfg := config()
			cfg.Clock = sandbox
			b := open(t, cfg)
			return b.Clocks, b.ClientClocks
		})
	})
	t.Run("Rules", func(t *testing.T) { rulestest.Run(t, open.rules) })
	t.Run("Saved", func(t *testing.T) {
		savedtest.Run(t, func(t *testing.T) scenarios.SavedStore { return open(t, config()).Library.SavedStore() })
	})
	t.Run("Buckets", func(t *testing.T) {
		ratelimittest.Run(t, func(t *testing.T) ratelimit.Store { return open(t, config()).Buckets })
	})
	t.Run("Clients", func(t *testing.T) {
		clientstest.Run(t, func(t *testing.T) idp.ClientStore { return open(t, config()).Clients })
	})
}

// config is the Config of a backend with every default: its own sandbox
// clock on real time.
func config() backend.Config {
	return backend.Config{Clock: clock.NewAdjustable(time.Now)}
}

// records is a backend's record store as storetest takes it. The suite
// closes the store it opened; the backend closes its records itself,
// with the rest of it, when the caller closes it (whose error the caller
// reports), and a store closed twice fails. So Close is the backend's.
type records struct{ store.Store }

// Close leaves the store to the backend that owns it.
func (records) Close() error { return nil }

// journal opens a backend whose journal has the bounds given. A bound of
// zero or less would be read by the backend as its default, so the
// suite's bounds are refused rather than changed.
func (o Opener) journal(t *testing.T, maxEntries int, maxBytes int64) journal.Log {
	t.Helper()
	if maxEntries <= 0 || maxBytes <= 0 {
		t.Fatalf("backendtest: a backend's journal takes no bound of %d entries or %d bytes: it reads one as its default", maxEntries, maxBytes)
	}
	cfg := config()
	cfg.JournalSize, cfg.JournalBytes = maxEntries, maxBytes
	return o(t, cfg).Journal
}

// journalCheckEvery is how often the journal suite reads a whole journal
// back in its long tests, as the journal package's own runs choose it:
// after every Add in this process, every 25 in Redis, where each read is a
// round trip. A backend opened to ask tells which kind open builds.
func (o Opener) journalCheckEvery(t *testing.T) int {
	if o(t, config()).Location == "" {
		return 1
	}
	return 25
}
