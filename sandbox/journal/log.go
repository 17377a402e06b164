package journal

import (
	"context"
	"errors"
)

// ErrUnavailable wraps every failure of the journal's backend (Redis): the
// caller should answer 503 with Retry-After. A read that returns it returned
// nothing: a page is never cut short.
var ErrUnavailable = errors.New("shared journal (Redis) unavailable")

// ErrCorrupt marks a read that met an entry it cannot decode (written by
// hand or by another program under the sandbox's keys). The read fails
// rather than skip it: a report judged on part of the journal could lie.
// Clearing the journal (DELETE /__sandbox/requests) removes the entry.
var ErrCorrupt = errors.New("the journal holds an entry that does not decode")

// Log is what the sandbox journals into and reads back: the in-memory
// Journal (the default) or the RedisJournal that replicas share. The
// conformance suite in sandbox/journal/journaltest pins what both do.
type Log interface {
	// Add stores e, numbering it, after truncating its long values, and
	// drops the oldest entries until the count and byte bounds hold. The
	// RedisJournal stores it in the background (see Flush).
	Add(ctx context.Context, e Entry) error
	// Find returns the matching entries, oldest first; with f.Limit, the
	// latest f.Limit of them.
	Find(ctx context.Context, f Filter) ([]Entry, error)
	// After returns the first limit matching entries above f.AfterID and
	// whether more follow (see Journal.After).
	After(ctx context.Context, f Filter, limit int) ([]Entry, bool, error)
	// Latest returns the newest limit matching entries, oldest first.
	Latest(ctx context.Context, f Filter, limit int) ([]Entry, error)
	// Clear empties the journal; ids keep counting up.
	Clear(ctx context.Context) error
	// ClearClient drops one client's entries and keeps the others. Its cost
	// grows with that client's entries, not with the journal.
	ClearClient(ctx context.Context, clientID string) error
	// Usage returns how many entries are kept and their Size in bytes.
	Usage(ctx context.Context) (entries int, bytes int64, err error)
	// Flush returns once every entry added before the call is stored: at
	// once in memory; for Redis, once the background writer has run. It
	// returns an error when one of those entries could not be stored.
	Flush(ctx context.Context) error
}

var (
	_ Log = (*Journal)(nil)
	_ Log = (*RedisJournal)(nil)
)
