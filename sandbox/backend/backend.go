// Package backend is where a sandbox keeps its state: the records, the
// journal, the clocks, the failure rules and saved scenarios, the rate
// limit buckets and the runtime clients, all behind one Backend value.
//
// Open is the one place that chooses between the two kinds: everything in
// this process (with the records in memory or a --data file), or the
// shared mode, where every part lives in one Redis or Redis Cluster and
// each replica is brought in step with the others before a request (see
// sync.go). The HTTP code takes a Backend and never asks which kind it
// has: what differs between them is behind the fields' interfaces and the
// methods below. Each part's interface is pinned by a conformance suite,
// run on each implementation in the part's own package and, through
// package backendtest, on the parts each kind of backend wires together.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// Backend is every part of a sandbox's state. Its fields are set by Open,
// Memory or Shared and not changed after the server is built from it.
type Backend struct {
	// Records holds the referrals and qualified referrals.
	Records store.Store
	// Journal is the request journal.
	Journal journal.Log
	// ClientClocks are the clocks the sandbox reads: the sandbox-wide one
	// and each client's moved apart from it.
	ClientClocks *clock.PerClient
	// Clocks moves ClientClocks, for every replica in shared mode.
	Clocks clock.Store
	// Library is the named scenarios; the ones saved at run time live in
	// Redis in shared mode.
	Library *scenarios.Library
	// Rules are the active failure rules.
	Rules scenarios.Engine
	// Buckets are the rate limits' token buckets.
	Buckets ratelimit.Store
	// Clients keeps the clients created at run time.
	Clients idp.ClientStore
	// Location is where the shared state lives as logs and the ready line
	// show it (no password); "" when it is in this process.
	Location string

	// sync brings the replica in step before a request; nil in memory.
	sync *sharedState
	// own is the Redis client Open dialled, nil otherwise.
	own redis.UniversalClient
	// closers release what Open opened, in order.
	closers []func() error
}

// Config is what a Backend is built from; the zero value of each field
// but Clock is a working default.
type Config struct {
	// Clock is the sandbox clock, which Clocks moves. Required.
	Clock *clock.Adjustable
	// Library is the named scenarios; default the embedded ones.
	Library *scenarios.Library
	// Activate names the scenarios active for every client from the
	// start (serve --scenario).
	Activate []string
	// MaxRules caps the active rules; default scenarios.DefaultMaxRules.
	MaxRules int
	// JournalSize and JournalBytes bound the journal; default
	// DefaultJournalSize and journal.DefaultMaxBytes.
	JournalSize  int
	JournalBytes int64
	// Quota bounds what each client may store; the zero value is none.
	Quota store.Quota
	// DataFile keeps the records in a file (--data); "" keeps them in
	// memory. It excludes Redis.
	DataFile string
	// Redis, when it names a Redis or a cluster, puts every part there.
	Redis RedisConfig
	// Logger receives the store's warnings.
	Logger *slog.Logger
}

// DefaultJournalSize is how many requests the journal keeps by default.
const DefaultJournalSize = 10000

// ErrUnavailable marks a failed call of the shared state: the request is
// answered 503 with Retry-After, never a 500, since it may succeed once
// Redis is back.
var ErrUnavailable = errors.New("the shared state (redis) failed")

// Open builds the backend cfg describes: in Redis when cfg.Redis names
// one, otherwise in this process.
func Open(ctx context.Context, cfg Config) (*Backend, error) {
	if !cfg.Redis.named() {
		records, err := openRecords(cfg)
		if err != nil {
			return nil, err
		}
		b, err := Memory(cfg, records)
		if err != nil {
			return nil, errors.Join(err, records.Close())
		}
		b.closers = append(b.closers, records.Close)
		return b, nil
	}
	if cfg.DataFile != "" {
		return nil, errors.New("--data and --redis exclude each other: the records live in one place")
	}
	return openRedis(ctx, cfg)
}

// openRecords opens the data file, or an in-memory store without one.
func openRecords(cfg Config) (*store.BuntStore, error) {
	path := cfg.DataFile
	if path == "" {
		path = store.MemoryPath
	}
	st, err := store.Open(path, store.WithLogger(cfg.Logger), store.WithQuota(cfg.Quota))
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	return st, nil
}

// Memory builds a backend whose every part but records lives in this
// process; the caller keeps records (and closes it).
func Memory(cfg Config, records store.Store) (*Backend, error) {
	b, rules, err := newParts(cfg, records)
	if err != nil {
		return nil, err
	}
	b.Rules = rules
	b.Journal = journal.NewBounded(journalBounds(cfg))
	b.Clocks = clock.NewMemory(b.ClientClocks)
	b.Buckets = ratelimit.NewMemory()
	b.Clients = recordStoreClients{st: records}
	return b, nil
}

// newParts checks cfg and builds what both kinds share: the clocks read
// and the library; and the rules with the start-up activations, in memory,
// which Shared carries over to Redis.
func newParts(cfg Config, records store.Store) (*Backend, *scenarios.MemoryEngine, error) {
	if cfg.Clock == nil {
		return nil, nil, errors.New("backend: no clock")
	}
	if records == nil {
		return nil, nil, errors.New("backend: no record store")
	}
	lib := cfg.Library
	if lib == nil {
		var err error
		if lib, err = scenarios.LoadLibrary(); err != nil {
			return nil, nil, fmt.Errorf("backend: scenario library: %w", err)
		}
	}
	b := &Backend{Records: records, ClientClocks: clock.NewPerClient(cfg.Clock), Library: lib}
	rules := scenarios.New(scenarios.Config{Library: lib, Clock: cfg.Clock, MaxRules: cfg.MaxRules})
	for _, name := range cfg.Activate {
		if _, err := rules.Activate(context.Background(), name, ""); err != nil {
			return nil, nil, fmt.Errorf("scenario: %w", err) // the error lists the known names
		}
	}
	return b, rules, nil
}

func journalBounds(cfg Config) (int, int64) {
	size, bytes := cfg.JournalSize, cfg.JournalBytes
	if size <= 0 {
		size = DefaultJournalSize
	}
	if bytes <= 0 {
		bytes = journal.DefaultMaxBytes
	}
	return size, bytes
}

// Bind makes p keep its runtime clients in b and judge each client's
// tokens on that client's clock, and lets the rules' timelines bound to a
// client follow it too. A sandbox binds its provider once, before serving.
func (b *Backend) Bind(ctx context.Context, p *idp.Provider) error {
	if err := p.UseClientStore(ctx, b.Clients); err != nil {
		return err
	}
	p.UseClientClock(b.ClientClocks.Now)
	b.Rules.UseClientClock(b.ClientClocks.Now)
	if b.sync != nil {
		b.sync.provider = p
	}
	return nil
}

// Sync brings this replica in step with the others before a request that
// depends on the shared state, and returns the request's ctx carrying the
// version of the failure rules it saw (scenarios.WithRulesVersion). In
// this process there is nothing to bring in step, and ctx comes back as
// it was.
func (b *Backend) Sync(ctx context.Context) (context.Context, error) {
	if b.sync == nil {
		return ctx, nil
	}
	rulesVersion, err := b.sync.sync()
	if err != nil {
		return ctx, err
	}
	return scenarios.WithRulesVersion(ctx, rulesVersion), nil
}

// Settle returns once no replica can still reuse a read of the shared
// state from before a change this one has just stored: admin changes call
// it before they answer (see sharedState). In this process it returns at
// once.
func (b *Backend) Settle() {
	if b.sync != nil {
		b.sync.settle()
	}
}

// Ping checks, within a short time, that the shared state can be read,
// for the health check; nil in this process.
func (b *Backend) Ping(ctx context.Context) error {
	if b.sync == nil {
		return nil
	}
	return b.sync.ping(ctx)
}

// Failure wraps err, a failed call of the record store while doing what.
// In shared mode any failure of it is the shared state's (503 with
// Retry-After), even one Redis answered itself, such as OOM under
// maxmemory or READONLY: the change may be retried, and a 500 would say
// it never can.
func (b *Backend) Failure(what string, err error) error {
	if b.sync != nil {
		return Unavailable(what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Unavailable wraps err, a failed call of the shared state while doing
// what, as ErrUnavailable, marking one that may have been applied
// (rediscall.MarkUnconfirmed).
func Unavailable(what string, err error) error {
	return fmt.Errorf("%s: %w: %w", what, ErrUnavailable, rediscall.MarkUnconfirmed(err))
}

// readFailure wraps err, a failed read of the shared state while doing
// what. A read changes nothing, so it is never marked as one that may have
// been applied: a write that fails at the read before it says Redis cannot
// be reached.
func readFailure(what string, err error) error {
	return fmt.Errorf("%s: %w: %w", what, ErrUnavailable, err)
}

// Close releases what Open opened: the record store (for a --data file,
// synced and unlocked) and the Redis client. The caller flushes the
// journal first, while the Redis client is still open.
func (b *Backend) Close() error {
	var err error
	for _, c := range b.closers {
		err = errors.Join(err, c())
	}
	return err
}
