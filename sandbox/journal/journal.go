// Package journal is the sandbox's request journal: a bounded ring buffer of
// the requests the sandbox answered, with credentials redacted before an
// entry is stored. The admin API serves it; the conformance report judges it.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package journal

import (
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

// Journal is a bounded ring buffer of the latest requests: it keeps at most
// maxEntries entries and at most maxBytes bytes of them (see Entry.Size),
// dropping the oldest first. Safe for concurrent use.
type Journal struct {
	mu       sync.Mutex
	entries  []Entry // ring of capacity maxEntries; head is the oldest
	sizes    []int64 // Size of each entry, so eviction need not recount
	head     int
	n        int
	bytes    int64
	maxBytes int64
	lastID   uint64
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
	return &Journal{entries: make([]Entry, maxEntries), sizes: make([]int64, maxEntries), maxBytes: maxBytes}
}

// Add stores e, numbering it, after truncating its long values (see
// truncate), and drops the oldest entries until both bounds hold.
func (j *Journal) Add(e Entry) {
	truncate(&e)
	size := e.Size()
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.n > 0 && (j.n == len(j.entries) || j.bytes+size > j.maxBytes) {
		j.bytes -= j.sizes[j.head]
		j.entries[j.head] = Entry{} // let the dropped headers be collected
		j.head = (j.head + 1) % len(j.entries)
		j.n--
	}
	j.lastID++
	e.ID = j.lastID
	i := (j.head + j.n) % len(j.entries)
	j.entries[i], j.sizes[i] = e, size
	j.n++
	j.bytes += size
}

// Reachable is always nil: the journal is in this process.
func (j *Journal) Reachable() error { return nil }

// Flush does nothing: Add stores at once.
func (j *Journal) Flush() {}

// Usage returns how many entries the journal holds and their Size in bytes.
func (j *Journal) Usage() (entries int, bytes int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.n, j.bytes
}

// Clear empties the journal; ids keep counting up so a client polling with
// an id never sees one reused.
func (j *Journal) Clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	clear(j.entries)
	j.head, j.n, j.bytes = 0, 0, 0
}

// Find returns the matching entries, oldest first; with a limit, the latest
// limit of them.
func (j *Journal) Find(f Filter) []Entry {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Entry
	for i := range j.n {
		if e := j.at(i); f.matches(e) {
			out = append(out, e)
		}
	}
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[len(out)-f.Limit:]
	}
	return out
}

// at is the i-th oldest entry; the caller holds the lock.
func (j *Journal) at(i int) Entry { return j.entries[(j.head+i)%len(j.entries)] }

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
