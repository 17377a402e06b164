package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tidwall/buntdb"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
)

// MemoryPath is the path Open takes for a store that lives only in memory.
const MemoryPath = ":memory:"

// BuntStore is the buntdb implementation of Store.
//
// Its methods take a context for the interface's sake and do not consult
// it: each works in memory or on a local file, waits on no network and
// finishes in milliseconds, so a caller gone meanwhile loses nothing by
// its finishing.
type BuntStore struct {
	// mu guards db and idx, which a file store's Reset replaces: every
	// method reaches them only through viewTx and updateTx, which hold mu
	// for reading.
	mu  sync.RWMutex
	db  *buntdb.DB
	idx *listIndex // the listing order of db's records
	// txMu makes a write transaction and its index changes one step for
	// readers: a writer holds it from before its first change until its
	// commit or rollback, index included (buntdb's own lock is released
	// before the index could be rolled back after a failed commit).
	txMu   sync.RWMutex
	closed bool // set by Close, under mu: Reset must not reopen the file
	// resetMu lets one Reset at a time build the reset file.
	resetMu sync.Mutex
	path    string // MemoryPath or the data file
	cfg     config
	lock    *fileLock // nil in memory
	bad     badKeys
	// verified lets listings write records through (see encoded.go).
	verified verifiedRecords
	// held is what each client holds, by escaped client id, for the
	// quota (see quota_bunt.go). Writers change it under txMu's write
	// lock, with the records.
	held map[string]usage
}

var _ Store = (*BuntStore)(nil)

// Open opens the store at path: MemoryPath for an in-memory store, else a
// file, created if missing, whose records are loaded. A file is locked
// (path + ".lock") while it is open: a second Open of it, from this process
// or another, fails at once with ErrLocked.
func Open(path string, opts ...Option) (*BuntStore, error) {
	if path == "" {
		return nil, fmt.Errorf("open store: %w: empty path (use %q for memory)", ErrInvalid, MemoryPath)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &BuntStore{path: path, cfg: cfg, bad: badKeys{log: cfg.logger}}
	var err error
	if path == MemoryPath {
		s.db, s.idx, err = openDB(path, cfg)
	} else {
		s.db, s.idx, s.lock, err = openFile(path, cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if s.held, err = countUsage(s.db); err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: count usage: %w", path, err), s.Close())
	}
	return s, nil
}

// Close syncs and closes the file (if any) and releases its lock. The
// store is unusable after.
func (s *BuntStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	err := s.db.Close()
	if s.lock != nil {
		err = errors.Join(err, s.lock.release())
	}
	if err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// viewTx runs fn in a read transaction of the current db and index.
func (s *BuntStore) viewTx(fn func(tx *storeTx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.txMu.RLock()
	defer s.txMu.RUnlock()
	return s.db.View(func(tx *buntdb.Tx) error {
		return fn(&storeTx{Tx: tx, idx: s.idx})
	})
}

// updateTx runs fn in a write transaction of the current db and index; if
// the transaction does not commit, the index is rolled back with it. A
// transaction that would take a client beyond the store's quota is
// refused (ErrQuota) and rolled back.
//
// Not db.Update, which commits what fn wrote when fn panics: half a write
// would be stored (and on file, kept), and the index would not follow the
// records a DeleteAll gathered. Here anything but fn's success and a
// commit (fn's error, the file's, a panic) rolls both back.
func (s *BuntStore) updateTx(fn func(tx *storeTx) error) error {
	return s.writeTx(s.cfg.quota, fn)
}

// loadTx is updateTx for loading fixtures, which no quota refuses: an
// operator's fixtures are what the sandbox is for.
func (s *BuntStore) loadTx(fn func(tx *storeTx) error) error {
	return s.writeTx(Quota{}, fn)
}

// writeTx is updateTx under the quota q.
func (s *BuntStore) writeTx(q Quota, fn func(tx *storeTx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.txMu.Lock()
	defer s.txMu.Unlock()
	tx, err := s.db.Begin(true)
	if err != nil {
		return err
	}
	t := &storeTx{Tx: tx, idx: s.idx}
	committed := false
	defer func() {
		if !committed {
			// ErrTxClosed after a failed Commit, which rolled back itself.
			_ = tx.Rollback()
			t.rollback()
		}
	}()
	if err := fn(t); err != nil {
		return err
	}
	if err := t.checkQuota(q, s.held); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	committed = true
	t.flush()
	if !t.deletedAll {
		t.applyUsage(s.held)
		return nil
	}
	held, err := countUsage(s.db)
	if err != nil {
		// Committed: the records are stored. The quota goes on from the
		// usage before, which the next open counts afresh.
		s.cfg.logger.Warn("store: could not count usage after a reset; quotas count from the old usage until the next start", "err", err)
		return nil
	}
	s.held = held
	return nil
}

// Empty reports whether the store holds nothing at all: no record, audit
// entry or runtime client. Only an empty store is seeded with the fixtures,
// so a data file that holds runtime clients keeps them across restarts.
func (s *BuntStore) Empty(_ context.Context) (bool, error) {
	var n int
	err := s.viewTx(func(tx *storeTx) error {
		var err error
		n, err = tx.Len()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("count records: %w", err)
	}
	return n == 0, nil
}

// Clients returns the sorted ids of the clients owning a record. It visits
// one record per client and kind, seeking each time past the client's last
// sort line, so it costs O(clients × log n), not O(n).
func (s *BuntStore) Clients(_ context.Context) ([]string, error) {
	seen := map[string]bool{}
	err := s.viewTx(func(tx *storeTx) error {
		for _, kind := range []string{referralPrefix, qualifiedPrefix} {
			for from := ""; ; {
				var key, value string
				tx.ascendIndex(kind, from, "", func(k, v string) bool {
					key, value = k, v
					return false
				})
				if key == "" {
					break
				}
				rec, err := decode[owner](key, value)
				switch {
				case s.bad.skip(key, err):
				case err != nil:
					return err
				default:
					seen[rec.ClientID] = true
				}
				// Seek by the sort line, which is what the index orders by,
				// to the first line after this client's.
				line, _ := splitValue(value)
				if escaped, _, ok := strings.Cut(line, ":"); ok {
					from = escaped + ";"
				} else {
					from = line + "\x00"
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list clients: %w", err)
	}
	clients := make([]string, 0, len(seen))
	for c := range seen {
		clients = append(clients, c)
	}
	sort.Strings(clients)
	return clients, nil
}

// owner is the part of either kind of record Clients needs.
type owner struct {
	ClientID string `json:"clientId"`
}

// Load inserts the set's records in one transaction.
func (s *BuntStore) Load(_ context.Context, set *fixtures.Set) error {
	e, err := EncodeSet(set)
	if err == nil {
		err = s.loadTx(func(tx *storeTx) error { return loadEncoded(tx, e) })
	}
	if err != nil {
		return fmt.Errorf("load fixtures: %w", err)
	}
	return nil
}

// Seed loads the set through Reset: on a file, Reset swaps in a complete
// file, so a crash while seeding leaves the file empty and the next start
// seeds again. One process holds the file, so no replica races it.
func (s *BuntStore) Seed(ctx context.Context, set *fixtures.Set) error { return s.Reset(ctx, set) }

// SeedEncoded is Seed with records already encoded (see EncodedSet).
func (s *BuntStore) SeedEncoded(ctx context.Context, e *EncodedSet) error {
	return s.ResetEncoded(ctx, e)
}

// Reset replaces every record with the set's.
func (s *BuntStore) Reset(ctx context.Context, set *fixtures.Set) error {
	e, err := EncodeSet(set)
	if err != nil {
		return fmt.Errorf("reset store: %w", err)
	}
	return s.ResetEncoded(ctx, e)
}

// ResetEncoded is Reset with records already encoded. In memory it is one
// transaction, which inserts e's own strings (the store and e then share
// them); a file is replaced whole (see resetFile), so that a crash leaves
// either the old records or the new ones.
func (s *BuntStore) ResetEncoded(_ context.Context, e *EncodedSet) error {
	if s.path != MemoryPath {
		return s.resetFile(e)
	}
	err := s.loadTx(func(tx *storeTx) error {
		if err := tx.DeleteAll(); err != nil {
			return err
		}
		return loadEncoded(tx, e)
	})
	if err != nil {
		return fmt.Errorf("reset store: %w", err)
	}
	return nil
}
