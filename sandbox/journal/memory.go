package journal

import (
	"context"
	"sort"
	"sync"
)

// Journal is the journal of one process: the latest requests, at most
// maxEntries of them and at most maxBytes bytes (see Entry.Size), dropping
// the oldest first. Safe for concurrent use.
//
// Entries sit in a queue, oldest first, in id order. Clearing a client
// marks that client's entries gone, found through an index of each
// client's ids, so its cost grows with that client's entries and never
// with the journal; gone entries are skipped by reads and dropped when the
// queue is compacted, which happens once they outnumber the others, so its
// cost is spread over the entries cleared.
type Journal struct {
	mu         sync.Mutex
	slots      []slot // slots[head:] is the queue
	head       int
	live, dead int // entries kept, and gone slots still in the queue
	bytes      int64
	maxEntries int
	maxBytes   int64
	lastID     uint64
	// byClient lists each client's kept entries' ids, oldest first.
	byClient map[string][]uint64
}

// slot is one entry in the queue, with its Size, so eviction need not
// recount; gone once its client's entries were cleared.
type slot struct {
	e    Entry
	size int64
	gone bool
}

// New returns a journal keeping the latest size entries, within
// DefaultMaxBytes.
func New(size int) *Journal { return NewBounded(size, DefaultMaxBytes) }

// NewBounded returns a journal keeping the latest entries, at most
// maxEntries of them and at most maxBytes bytes. maxBytes below MinMaxBytes
// is raised to it, so that any one (truncated) entry fits.
func NewBounded(maxEntries int, maxBytes int64) *Journal {
	if maxEntries < 1 {
		maxEntries = 1
	}
	if maxBytes < MinMaxBytes {
		maxBytes = MinMaxBytes
	}
	return &Journal{maxEntries: maxEntries, maxBytes: maxBytes, byClient: make(map[string][]uint64)}
}

// Add stores e, numbering it, after truncating its long values (see
// truncate), and drops the oldest entries until both bounds hold.
func (j *Journal) Add(_ context.Context, e Entry) error {
	truncate(&e)
	size := e.Size()
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.live > 0 && (j.live >= j.maxEntries || j.bytes+size > j.maxBytes) {
		j.dropOldest()
	}
	j.lastID++
	e.ID = j.lastID
	j.slots = append(j.slots, slot{e: e, size: size})
	if e.ClientID != "" {
		j.byClient[e.ClientID] = append(j.byClient[e.ClientID], e.ID)
	}
	j.live++
	j.bytes += size
	j.compact()
	return nil
}

// dropOldest drops the oldest kept entry, and the gone slots before it.
// The caller holds the lock and j.live > 0.
func (j *Journal) dropOldest() {
	j.skipGone()
	sl := &j.slots[j.head]
	if c := sl.e.ClientID; c != "" {
		if ids := j.byClient[c][1:]; len(ids) > 0 {
			j.byClient[c] = ids
		} else {
			delete(j.byClient, c)
		}
	}
	j.bytes -= sl.size
	j.live--
	*sl = slot{} // let the dropped headers be collected
	j.head++
	j.skipGone()
}

// skipGone moves the head past gone slots. The caller holds the lock.
func (j *Journal) skipGone() {
	for j.head < len(j.slots) && j.slots[j.head].gone {
		j.slots[j.head] = slot{}
		j.head++
		j.dead--
	}
}

// compact moves the queue to the start of its array once the dropped
// slots before it are as many as those in it, and drops the gone slots
// once they outnumber the kept ones: each costs what was dropped since.
// The caller holds the lock.
func (j *Journal) compact() {
	const minWaste = 64
	if j.dead > j.live+minWaste {
		kept := make([]slot, 0, j.live)
		for _, sl := range j.slots[j.head:] {
			if !sl.gone {
				kept = append(kept, sl)
			}
		}
		j.slots, j.head, j.dead = kept, 0, 0
		return
	}
	if j.head > minWaste && j.head >= len(j.slots)-j.head {
		n := copy(j.slots, j.slots[j.head:])
		clear(j.slots[n:])
		j.slots, j.head = j.slots[:n], 0
	}
}

// Flush does nothing: Add stores at once.
func (j *Journal) Flush(context.Context) error { return nil }

// Usage returns how many entries the journal holds and their Size in bytes.
func (j *Journal) Usage(context.Context) (entries int, bytes int64, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.live, j.bytes, nil
}

// Clear empties the journal; ids keep counting up so a client polling with
// an id never sees one reused.
func (j *Journal) Clear(context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.slots, j.head, j.live, j.dead, j.bytes = nil, 0, 0, 0, 0
	j.byClient = make(map[string][]uint64)
	return nil
}

// Find returns the matching entries, oldest first; with a limit, the latest
// limit of them.
func (j *Journal) Find(_ context.Context, f Filter) ([]Entry, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Entry
	for _, sl := range j.slots[j.head:] {
		if !sl.gone && f.matches(sl.e) {
			out = append(out, sl.e)
		}
	}
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[len(out)-f.Limit:]
	}
	return out, nil
}

// find returns the index in slots of the entry numbered id, or -1: ids
// grow along the queue, gone slots keeping theirs. The caller holds the
// lock.
func (j *Journal) find(id uint64) int {
	q := j.slots[j.head:]
	i := sort.Search(len(q), func(i int) bool { return q[i].e.ID >= id })
	if i == len(q) || q[i].e.ID != id {
		return -1
	}
	return j.head + i
}
