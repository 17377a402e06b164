// Package journal is the sandbox's request journal: a bounded ring buffer of
// the requests the sandbox answered, with credentials redacted before an
// entry is stored. The admin API serves it; the conformance report judges it.
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

// Journal is a bounded ring buffer of the latest requests. Safe for
// concurrent use.
type Journal struct {
	mu      sync.Mutex
	entries []Entry // ring of capacity len; next is the write position
	next    int
	full    bool
	lastID  uint64
}

// New returns a journal keeping the latest size entries.
func New(size int) *Journal {
	if size < 1 {
		size = 1
	}
	return &Journal{entries: make([]Entry, size)}
}

// Add stores e, numbering it, and drops the oldest entry when full.
func (j *Journal) Add(e Entry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lastID++
	e.ID = j.lastID
	j.entries[j.next] = e
	j.next = (j.next + 1) % len(j.entries)
	if j.next == 0 {
		j.full = true
	}
}

// Clear empties the journal; ids keep counting up so a client polling with
// an id never sees one reused.
func (j *Journal) Clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	clear(j.entries)
	j.next, j.full = 0, false
}

// Find returns the matching entries, oldest first; with a limit, the latest
// limit of them.
func (j *Journal) Find(f Filter) []Entry {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Entry
	j.each(func(e Entry) {
		if f.matches(e) {
			out = append(out, e)
		}
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[len(out)-f.Limit:]
	}
	return out
}

// each visits entries oldest first; the caller holds the lock.
func (j *Journal) each(visit func(Entry)) {
	if j.full {
		for _, e := range j.entries[j.next:] {
			visit(e)
		}
	}
	for _, e := range j.entries[:j.next] {
		visit(e)
	}
}

func (f Filter) matches(e Entry) bool {
	switch {
	case e.ID <= f.AfterID:
		return false
	case f.ClientID != "" && e.ClientID != f.ClientID:
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
