package sandboxtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// JournalEntry is one request the sandbox journaled: what the client under
// test sent and what the sandbox answered. Secrets never reach the
// journal: the Authorization header, cookies and anything that looks like
// a credential are redacted, and bodies are not kept.
type JournalEntry struct {
	// ID grows with every request; pass the last one seen as
	// JournalFilter.AfterID to read only newer ones.
	ID uint64 `json:"id"`
	// At is when the request arrived, in sandbox time.
	At time.Time `json:"at"`
	// Method, Path and Query are the request's.
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	// Endpoint is the kind of request: token, api or ping.
	Endpoint Endpoint `json:"endpoint,omitempty"`
	// ClientID is the client the request counts as (from its token or
	// its token request); empty when the sandbox could not tell.
	ClientID string `json:"clientId,omitempty"`
	// TokenID is the id (jti) of the token the sandbox issued, on a token
	// request, or of the bearer token the request carried: a test tells
	// by it which token its client used.
	TokenID string `json:"tokenId,omitempty"`
	// Status is the status the sandbox answered.
	Status int `json:"status"`
	// Fault is the connection fault a rule forced, if any.
	Fault Fault `json:"fault,omitempty"`
	// RuleID and Scenario name the rule (and its scenario) that forced
	// the answer; empty for a normal answer.
	RuleID   string `json:"ruleId,omitempty"`
	Scenario string `json:"scenario,omitempty"`
	// RetryAfterSeconds is the Retry-After the answer carried.
	RetryAfterSeconds int `json:"retryAfterSeconds,omitempty"`
	// DurationMs is how long the sandbox took to answer, delays included.
	DurationMs float64 `json:"durationMs"`
	// DelayMs is how long a rule's delay held the answer back (included
	// in DurationMs); 0 when none did.
	DelayMs float64 `json:"delayMs,omitempty"`
	// RequestID is the x-request-id of the answer.
	RequestID string `json:"requestId"`
	// TLS is true when the request came over HTTPS.
	TLS bool `json:"tls"`
	// Headers are the request headers, one value each, redacted.
	Headers map[string]string `json:"headers"`
	// Truncated names what was cut to fit the journal's bounds: "path",
	// "query", "headers.<Name>" or "headers". Empty when nothing was.
	Truncated []string `json:"truncated,omitempty"`
	// TokenRefusal says why a bearer token was refused (a 401): expired,
	// wrong audience, bad signature...
	TokenRefusal string `json:"tokenRefusal,omitempty"`
	// Run is the X-Sandbox-Run header (or ?run= parameter) the request
	// carried, to tell a test's programs apart.
	Run string `json:"run,omitempty"`
	// Upstream is what the real service answered, when the sandbox is a
	// recording proxy (WithUpstream); nil otherwise.
	Upstream *UpstreamExchange `json:"upstream,omitempty"`
}

// UpstreamExchange is a recording proxy's exchange with the real service,
// patient data replaced and credentials redacted as in the rest of the
// journal.
type UpstreamExchange struct {
	// URL is where the request went.
	URL string `json:"url"`
	// RequestBody is the JSON body forwarded; absent for other bodies.
	RequestBody json.RawMessage `json:"requestBody,omitempty"`
	// Status is the real service's status.
	Status int `json:"status"`
	// Headers are the answer's headers, one value each.
	Headers map[string]string `json:"headers"`
	// Body is the answer's JSON body; BodyOmitted says why it is absent.
	Body        json.RawMessage `json:"body,omitempty"`
	BodyBytes   int             `json:"bodyBytes"`
	BodyOmitted string          `json:"bodyOmitted,omitempty"`
	// Divergences say how the answer differs from the sandbox's OpenAPI
	// document: "the real service answered X; the document says Y".
	Divergences []string `json:"divergences,omitempty"`
	// Error is why no answer came (the real service unreachable).
	Error string `json:"error,omitempty"`
}

// JournalFilter selects journal entries; zero fields match everything.
type JournalFilter struct {
	// AfterID keeps entries newer than the one with this id.
	AfterID uint64
	// ClientID keeps one client's requests.
	ClientID string
	// Path keeps requests to this path or, when it ends in "*", to every
	// path that starts with what comes before the "*", e.g. /api/v1/*.
	Path string
	// Status keeps answers with this status.
	Status int
	// Since keeps requests that arrived at or after this sandbox time.
	Since time.Time
	// Limit keeps only the latest Limit entries; 0 keeps all.
	Limit int
}

// requestsPageSize is how many journal entries Requests asks for at once.
const requestsPageSize = journal.DefaultPageLimit

// Requests returns the journal entries filter selects, oldest first: what
// the client under test sent and what the sandbox answered. The admin API
// and health check are never journaled. It follows the journal's pages,
// however many there are. The journal keeps the latest requests within a
// bound (10000 by default), so a long test reads what it keeps.
func (s *Sandbox) Requests(t testing.TB, filter JournalFilter) []JournalEntry {
	t.Helper()
	entries, err := s.RequestsContext(context.Background(), filter)
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	return entries
}

// RequestsContext is Requests without a test: a refused or failed read is
// an error, never a shorter list.
func (s *Sandbox) RequestsContext(ctx context.Context, filter JournalFilter) ([]JournalEntry, error) {
	if filter.Limit > 0 && filter.Limit <= requestsPageSize {
		// One page of the newest entries is the answer when it is full.
		// A shorter one means fewer matches, or a page the journal cut at
		// its byte bound: the walk below tells them apart, and costs
		// little when few entries match.
		page, err := s.requestsPage(ctx, journalQuery(filter, false, filter.Limit))
		if err != nil {
			return nil, fmt.Errorf("requests: %w", err)
		}
		if len(page.Requests) == filter.Limit {
			return page.Requests, nil
		}
	}
	all := []JournalEntry{}
	for {
		page, err := s.requestsPage(ctx, journalQuery(filter, true, requestsPageSize))
		if err != nil {
			return nil, fmt.Errorf("requests after id %d: %w", filter.AfterID, err)
		}
		all = append(all, page.Requests...)
		if page.NextAfterID == nil {
			break
		}
		filter.AfterID = *page.NextAfterID
	}
	if filter.Limit > 0 && len(all) > filter.Limit {
		all = all[len(all)-filter.Limit:]
	}
	return all, nil
}

// requestsPage is one answer of GET /__sandbox/requests.
type requestsPage struct {
	Requests    []JournalEntry `json:"requests"`
	NextAfterID *uint64        `json:"nextAfterId"`
}

func (s *Sandbox) requestsPage(ctx context.Context, query string) (requestsPage, error) {
	page := requestsPage{Requests: []JournalEntry{}}
	err := s.admin(ctx, http.MethodGet, "/__sandbox/requests?"+query, nil, http.StatusOK, &page)
	return page, err
}

// journalQuery writes f as the query of GET /__sandbox/requests: a walk
// from f.AfterID when walk is set, else the newest entries.
func journalQuery(f JournalFilter, walk bool, limit int) string {
	q := url.Values{}
	if walk {
		q.Set("afterId", strconv.FormatUint(f.AfterID, 10))
	}
	if f.ClientID != "" {
		q.Set("clientId", f.ClientID)
	}
	if f.Path != "" {
		q.Set("path", f.Path)
	}
	if f.Status != 0 {
		q.Set("status", strconv.Itoa(f.Status))
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	q.Set("limit", strconv.Itoa(limit))
	return q.Encode()
}
