// Package journal is the sandbox's request journal: the latest requests the
// sandbox answered, bounded in count and bytes, with credentials redacted
// before an entry is stored. Log is the interface; Journal keeps it in the
// process and RedisJournal in Redis for replicas to share, and the suite in
// sandbox/journal/journaltest pins that both behave alike. The admin API
// serves it; the conformance report judges it.
//
// This package is the sandbox's own; it is not a stable API.
package journal

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"
)

// Entry is one request the sandbox answered, as GET
// /__sandbox/requests shows it. It never holds a secret: Authorization,
// cookies and any header or query parameter that looks like a credential are
// redacted before the entry is stored, and request bodies are not kept.
type Entry struct {
	ID                uint64            `json:"id"`
	At                string            `json:"at"`
	Method            string            `json:"method"`
	Path              string            `json:"path"`
	Query             string            `json:"query,omitempty"`
	Endpoint          string            `json:"endpoint,omitempty"`
	ClientID          string            `json:"clientId,omitempty"`
	TokenID           string            `json:"tokenId,omitempty"`
	TokenExpiresAt    string            `json:"tokenExpiresAt,omitempty"`
	Status            int               `json:"status"`
	Fault             string            `json:"fault,omitempty"`
	RuleID            string            `json:"ruleId,omitempty"`
	Scenario          string            `json:"scenario,omitempty"`
	RetryAfterSeconds int               `json:"retryAfterSeconds,omitempty"`
	DurationMs        float64           `json:"durationMs"`
	RequestID         string            `json:"requestId"`
	TLS               bool              `json:"tls"`
	RequestBytes      int64             `json:"requestBytes"`
	Headers           map[string]string `json:"headers"`
	// Truncated names what was cut to fit the journal's per-entry bounds
	// (see truncate): "path", "query", "headers.<Name>" for one value,
	// "headers" when headers were dropped. Absent when nothing was cut.
	Truncated []string `json:"truncated,omitempty"`
	// NamedClientID is the client_id a token request named when the sandbox
	// could not attribute the request to it (no client has that id): the
	// report lists such ids apart, as unknown clients.
	NamedClientID string `json:"namedClientId,omitempty"`
	// Connection is the client's address (ip:port) of the TCP connection
	// the request came on; the report tells programs apart by it.
	Connection string `json:"connection,omitempty"`
	// Run is the X-Sandbox-Run header or ?run= parameter a test set to
	// label its program.
	Run string `json:"run,omitempty"`
	// TokenRefusal says why the bearer token was refused (a 401): expired,
	// wrong issuer, bad signature, unknown client...
	TokenRefusal string `json:"tokenRefusal,omitempty"`
	// ClockOffsetSeconds is how far the sandbox clock was from real time
	// (POST /__sandbox/clock), so the report can tell a token that expired
	// because the clock jumped.
	ClockOffsetSeconds float64 `json:"clockOffsetSeconds,omitempty"`
}

// Filter selects journal entries; zero fields match everything.
type Filter struct {
	// AfterID keeps entries with a larger id: a poller passes the last id
	// it saw.
	AfterID  uint64
	ClientID string
	Path     string
	Status   int
	Since    time.Time
	Limit    int
}

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

func (f Filter) matches(e Entry) bool {
	switch {
	case e.ID <= f.AfterID:
		return false
	case f.ClientID != "" && e.ClientID != f.ClientID && e.NamedClientID != f.ClientID:
		return false
	case f.Path != "" && !pathFilterMatches(f.Path, e.Path):
		return false
	case f.Status != 0 && e.Status != f.Status:
		return false
	case !f.Since.IsZero():
		at, err := time.Parse(time.RFC3339Nano, e.At)
		return err == nil && !at.Before(f.Since)
	}
	return true
}

// pathFilterMatches matches a path exactly, or by prefix when the filter
// ends in "*".
func pathFilterMatches(filter, path string) bool {
	if prefix, ok := strings.CutSuffix(filter, "*"); ok {
		return strings.HasPrefix(path, prefix)
	}
	return filter == path
}
