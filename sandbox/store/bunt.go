package store

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/tidwall/buntdb"
)

// MemoryPath is the path Open takes for a store that lives only in memory.
const MemoryPath = ":memory:"

// BuntStore is the buntdb implementation of Store.
type BuntStore struct {
	db *buntdb.DB
}

var _ Store = (*BuntStore)(nil)

// Open opens the store at path: MemoryPath for an in-memory store, else a
// file, created if missing, whose records are loaded. The file must not be
// opened by two processes at once.
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
	db, err := buntdb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := cfg.apply(db); err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", path, err), db.Close())
	}
	if err := createIndexes(db); err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", path, err), db.Close())
	}
	return &BuntStore{db: db}, nil
}

// Close syncs and closes the file (if any). The store is unusable after.
func (s *BuntStore) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// Empty reports whether the store holds no record: no key in either
// record index (runtime clients do not count).
func (s *BuntStore) Empty() (bool, error) {
	empty := true
	err := s.db.View(func(tx *buntdb.Tx) error {
		for _, index := range []string{referralsNewest, qualifiedNewest} {
			n, err := tx.Len()
			if err != nil || n == 0 {
				return err
			}
			if err := tx.Ascend(index, func(_, _ string) bool { empty = false; return false }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("count records: %w", err)
	}
	return empty, nil
}

// Clients returns the sorted ids of the clients owning a record. It visits
// one record per client and kind, seeking each time past the client's last
// sort line, so it costs O(clients × log n), not O(n).
func (s *BuntStore) Clients() ([]string, error) {
	seen := map[string]bool{}
	err := s.db.View(func(tx *buntdb.Tx) error {
		for _, index := range []string{referralsNewest, qualifiedNewest} {
			for from := ""; ; {
				var key, value string
				err := tx.AscendGreaterOrEqual(index, from, func(k, v string) bool {
					key, value = k, v
					return false
				})
				if err != nil {
					return err
				}
				if key == "" {
					break
				}
				rec, err := decode[owner](key, value)
				if err != nil {
					return err
				}
				seen[rec.ClientID] = true
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
func (s *BuntStore) Load(set *fixtures.Set) error {
	if err := s.db.Update(func(tx *buntdb.Tx) error { return loadSet(tx, set) }); err != nil {
		return fmt.Errorf("load fixtures: %w", err)
	}
	return nil
}

// Reset replaces every record with the set's, in one transaction. On a file
// it is written as one flush followed by the new records.
func (s *BuntStore) Reset(set *fixtures.Set) error {
	err := s.db.Update(func(tx *buntdb.Tx) error {
		if err := tx.DeleteAll(); err != nil {
			return err
		}
		return loadSet(tx, set)
	})
	if err != nil {
		return fmt.Errorf("reset store: %w", err)
	}
	return nil
}

func loadSet(tx *buntdb.Tx, set *fixtures.Set) error {
	if set == nil {
		return nil
	}
	for i, r := range set.Referrals {
		key, value, err := encodeReferral(r)
		if err == nil {
			err = insert(tx, key, value)
		}
		if err != nil {
			return fmt.Errorf("referral %d (%q): %w", i, r.OutcomesID, err)
		}
	}
	for i, q := range set.QualifiedReferrals {
		if err := insertQualified(tx, q); err != nil {
			return fmt.Errorf("qualified referral %d (%q): %w", i, q.ExternalSourceID, err)
		}
	}
	return nil
}
