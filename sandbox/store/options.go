package store

import (
	"fmt"
	"log/slog"

	"github.com/tidwall/buntdb"
)

// Option adjusts how Open configures a file-backed store. Options other
// than WithLogger and WithQuota have no effect on ":memory:", which never
// touches a disk.
type Option func(*config)

type config struct {
	syncPolicy     buntdb.SyncPolicy
	shrinkPercent  int
	shrinkMinSize  int
	shrinkDisabled bool
	logger         *slog.Logger
	quota          Quota
}

// defaultConfig is what a file-backed store runs with unless told otherwise.
//
// Sync policy Always: every committed write transaction is fsynced before the
// call returns, so a write the API has acknowledged survives the process
// being killed mid-write and also a power loss or kernel crash. The cost is
// one fsync per write transaction (create, update, audited read, load,
// reset): from tens of microseconds on disks with a power-safe cache to
// milliseconds on consumer SSDs, network and spinning disks, where
// EverySecond costs a write almost nothing. That caps a file store at a
// few thousand writes per second,
// plenty for a sandbox. Reads without an audit entry never sync. EverySecond
// (buntdb's own default) still survives SIGKILL, since the kernel keeps
// written pages when a process dies; it loses up to a second of writes only
// when the machine itself goes down. buntdb ignores an fsync error after a
// successful write, so Always cannot report a failing disk.
//
// Auto-shrink: buntdb appends every write to the file, and an audited read
// rewrites the whole record, so the file grows with traffic, not with data.
// buntdb rewrites it compactly in the background once it has doubled (100%)
// since the last rewrite and is over 4 MiB; buntdb's 32 MiB floor is large
// for a sandbox whose live data is usually a few hundred kilobytes. The
// rewrite goes to a temporary file that is renamed over the old one, so a
// kill during it leaves either file whole. buntdb does not fsync the
// rewritten file before the rename, so the power-loss guarantee above is
// weaker for the instant of a shrink; SIGKILL is unaffected.
func defaultConfig() config {
	return config{
		syncPolicy:    buntdb.Always,
		shrinkPercent: 100,
		shrinkMinSize: 4 << 20,
		logger:        slog.New(slog.DiscardHandler),
	}
}

// WithLogger sets where the store reports what it recovered from: a torn
// tail cut at open, an interrupted reset, records that no longer decode.
// Default: nowhere.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithSyncPolicy sets how often the file is fsynced: buntdb.Always (the
// default), buntdb.EverySecond or buntdb.Never. See defaultConfig for the
// trade-off.
func WithSyncPolicy(p buntdb.SyncPolicy) Option {
	return func(c *config) { c.syncPolicy = p }
}

// WithAutoShrink rewrites the file in the background once it has grown by
// percentage since the last rewrite and is larger than minSize bytes.
func WithAutoShrink(percentage, minSize int) Option {
	return func(c *config) {
		c.shrinkPercent, c.shrinkMinSize, c.shrinkDisabled = percentage, minSize, false
	}
}

// WithoutAutoShrink turns background rewriting of the file off; the file
// then only grows.
func WithoutAutoShrink() Option {
	return func(c *config) { c.shrinkDisabled = true }
}

func (c config) check() error {
	switch c.syncPolicy {
	case buntdb.Never, buntdb.EverySecond, buntdb.Always:
	default:
		return fmt.Errorf("%w: unknown sync policy %d", ErrInvalid, c.syncPolicy)
	}
	if c.shrinkPercent < 0 || c.shrinkMinSize < 0 {
		return fmt.Errorf("%w: auto-shrink percentage and minimum size must not be negative", ErrInvalid)
	}
	return c.quota.check()
}

// apply copies the configuration onto buntdb's.
func (c config) apply(db *buntdb.DB) error {
	var bc buntdb.Config
	if err := db.ReadConfig(&bc); err != nil {
		return fmt.Errorf("read buntdb config: %w", err)
	}
	bc.SyncPolicy = c.syncPolicy
	bc.AutoShrinkPercentage = c.shrinkPercent
	bc.AutoShrinkMinSize = c.shrinkMinSize
	bc.AutoShrinkDisabled = c.shrinkDisabled
	if err := db.SetConfig(bc); err != nil {
		return fmt.Errorf("set buntdb config: %w", err)
	}
	return nil
}
