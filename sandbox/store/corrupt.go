package store

import (
	"errors"
	"log/slog"
	"sync"
)

// maxLoggedBadKeys bounds the memory badKeys spends remembering which keys
// it has logged; past it, every sighting is logged again.
const maxLoggedBadKeys = 1024

// badKeys reports stored records that no longer decode (a data file edited
// by hand, damaged on disk, or written by a version whose record shape
// changed). Listings skip them rather than fail every page that contains
// one, so that one bad record does not take a client's whole listing down;
// the operator learns the key from the log, once per key.
type badKeys struct {
	log    *slog.Logger
	mu     sync.Mutex
	logged map[string]bool
}

// skip decides what a listing does with a decode error: it logs and
// swallows ErrCorrupt (true) and leaves any other error to the caller.
func (b *badKeys) skip(key string, err error) bool {
	if !errors.Is(err, ErrCorrupt) {
		return false
	}
	b.mu.Lock()
	seen := b.logged[key]
	if !seen && len(b.logged) < maxLoggedBadKeys {
		if b.logged == nil {
			b.logged = map[string]bool{}
		}
		b.logged[key] = true
	}
	b.mu.Unlock()
	if !seen {
		b.log.Error("data file: a stored record does not decode; listings leave it out and reading it answers 500",
			"key", key, "err", err)
	}
	return true
}
