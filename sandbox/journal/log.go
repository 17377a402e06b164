package journal

// Log is what the sandbox journals into and reads back: the in-memory
// Journal (the default) or the RedisJournal that replicas share.
type Log interface {
	// Add stores e, numbering it, after truncating its long values, and
	// drops the oldest entries until the count and byte bounds hold.
	Add(e Entry)
	// Find returns the matching entries, oldest first; with f.Limit, the
	// latest f.Limit of them.
	Find(f Filter) []Entry
	// After returns the first limit matching entries above f.AfterID and
	// whether more follow (see Journal.After).
	After(f Filter, limit int) ([]Entry, bool)
	// Latest returns the newest limit matching entries, oldest first.
	Latest(f Filter, limit int) []Entry
	// Clear empties the journal; ids keep counting up.
	Clear()
	// ClearClient drops one client's entries and keeps the others.
	ClearClient(clientID string)
	// Usage returns how many entries are kept and their Size in bytes.
	Usage() (entries int, bytes int64)
	// Reachable returns nil when the journal can be read and written: always
	// in memory; for Redis, when it answers a PING.
	Reachable() error
	// Flush returns once every entry added before the call is stored:
	// at once in memory; for Redis, once the background writer has run.
	Flush()
}

var (
	_ Log = (*Journal)(nil)
	_ Log = (*RedisJournal)(nil)
)
