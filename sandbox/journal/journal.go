// Package journal is the sandbox's request journal: the latest requests the
// sandbox answered, bounded in count and bytes, with credentials redacted
// before an entry is stored. Log is the interface; Journal keeps it in the
// process and RedisJournal in Redis for replicas to share, and the suite in
// sandbox/journal/journaltest pins that both behave alike. The admin API
// serves it; the conformance report judges it.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package journal

import (
	"strings"
	"time"
)

// RateLimit is an answer's RateLimit-Limit, RateLimit-Remaining and
// RateLimit-Reset headers (draft-ietf-httpapi-ratelimit-headers), as sent.
type RateLimit struct {
	Limit     int `json:"limit"`
	Remaining int `json:"remaining"`
	Reset     int `json:"reset"`
}

// Entry is one request the sandbox answered, as GET
// /__sandbox/requests shows it. It never holds a secret: Authorization,
// cookies and any header or query parameter that looks like a credential are
// redacted before the entry is stored, and request bodies are not kept.
type Entry struct {
	ID                uint64 `json:"id"`
	At                string `json:"at"`
	Method            string `json:"method"`
	Path              string `json:"path"`
	Query             string `json:"query,omitempty"`
	Endpoint          string `json:"endpoint,omitempty"`
	ClientID          string `json:"clientId,omitempty"`
	TokenID           string `json:"tokenId,omitempty"`
	TokenExpiresAt    string `json:"tokenExpiresAt,omitempty"`
	Status            int    `json:"status"`
	Fault             string `json:"fault,omitempty"`
	RuleID            string `json:"ruleId,omitempty"`
	Scenario          string `json:"scenario,omitempty"`
	RetryAfterSeconds int    `json:"retryAfterSeconds,omitempty"`
	// RateLimit is what the answer's RateLimit-* headers told the client
	// of its quota; absent when the answer carried none. A throttling bug
	// report needs it beside the 429.
	RateLimit  *RateLimit `json:"rateLimit,omitempty"`
	DurationMs float64    `json:"durationMs"`
	// DelayMs is how long a rule's delay (or X-Sandbox-Delay) held the
	// answer back, included in DurationMs; absent when none did. A saved
	// timeline replays it, not DurationMs, which also holds the machine's
	// own time (a loaded host, Redis round trips).
	DelayMs      float64           `json:"delayMs,omitempty"`
	RequestID    string            `json:"requestId"`
	TLS          bool              `json:"tls"`
	RequestBytes int64             `json:"requestBytes"`
	Headers      map[string]string `json:"headers"`
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
	// Location is the Location header of the answer (a created or
	// conflicting record), also when a drop-after-commit fault kept the
	// answer from the client: Status and Location then say what was
	// committed, Fault that nobody received it.
	Location string `json:"location,omitempty"`
	// Submission is a digest of the trial and the patient a referral was
	// submitted for (see the sandbox's submissionOf), never the patient
	// data itself: equal digests are the same patient referred to the same
	// trial.
	Submission string `json:"submission,omitempty"`
	// Upstream is the real service's answer when the sandbox forwarded
	// the request (serve --upstream); see upstream.go.
	Upstream *Upstream `json:"upstream,omitempty"`
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
