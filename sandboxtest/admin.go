package sandboxtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// maxBodyBytes bounds what the helpers read of a sandbox answer; a journal
// page of requestsPageSize entries fits within it however large each entry
// is (see journal.Entry.Size).
const maxBodyBytes = 64 << 20

// requestsPageSize is how many journal entries Requests asks for at once.
const requestsPageSize = journal.DefaultPageLimit

// The admin helpers below go through the admin API over HTTP, exactly as a
// partner's tooling or CI script would, so they also work with an admin
// token set through WithOptions.

// ApplyScenario activates the named scenario of the library, bound to
// clientID, or for every client when clientID is empty.
func (s *Sandbox) ApplyScenario(t testing.TB, name, clientID string) {
	t.Helper()
	body := map[string]string{"clientId": clientID}
	if err := s.admin(context.Background(), http.MethodPost, "/__sandbox/library/"+url.PathEscape(name), body, http.StatusCreated, nil); err != nil {
		t.Fatalf("sandboxtest: apply scenario %s: %v", name, err)
	}
}

// AddRule adds one failure rule and returns it as the sandbox holds it:
// with its id, and counters that start at zero.
func (s *Sandbox) AddRule(t testing.TB, rule scenarios.Rule) scenarios.RuleStatus {
	t.Helper()
	var added scenarios.RuleStatus
	if err := s.admin(context.Background(), http.MethodPost, "/__sandbox/scenarios", rule, http.StatusCreated, &added); err != nil {
		t.Fatalf("sandboxtest: add rule: %v", err)
	}
	return added
}

// Requests returns the journal entries filter selects, oldest first: what
// the client under test sent and what the sandbox answered. The admin API
// and health check are never journaled. With filter.Limit, only the latest
// Limit of them. It follows the journal's pages, however many there are.
func (s *Sandbox) Requests(t testing.TB, filter journal.Filter) []sandbox.JournalEntry {
	t.Helper()
	if filter.Limit > 0 && filter.Limit <= requestsPageSize {
		// One page of the newest entries is exactly the answer.
		page, err := s.requestsPage(journalQuery(filter, false, filter.Limit))
		if err != nil {
			t.Fatalf("sandboxtest: requests: %v", err)
		}
		return page.Requests
	}
	var all []sandbox.JournalEntry
	for {
		page, err := s.requestsPage(journalQuery(filter, true, requestsPageSize))
		if err != nil {
			t.Fatalf("sandboxtest: requests: %v", err)
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
	return all
}

// requestsPage is one answer of GET /__sandbox/requests.
type requestsPage struct {
	Requests    []sandbox.JournalEntry `json:"requests"`
	NextAfterID *uint64                `json:"nextAfterId"`
}

func (s *Sandbox) requestsPage(query string) (requestsPage, error) {
	page := requestsPage{Requests: []sandbox.JournalEntry{}}
	err := s.admin(context.Background(), http.MethodGet, "/__sandbox/requests?"+query, nil, http.StatusOK, &page)
	return page, err
}

// journalQuery writes filter as the query of GET /__sandbox/requests: a
// walk from filter.AfterID when walk is set, else the newest entries.
func journalQuery(f journal.Filter, walk bool, limit int) string {
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

// AdvanceClock moves sandbox time forward by d (back when d is negative):
// tokens expire, and timestamps move, without waiting. The API refuses a
// token the second its exp passes (no leeway unless --clock-skew).
func (s *Sandbox) AdvanceClock(t testing.TB, d time.Duration) {
	t.Helper()
	body := map[string]string{"advance": d.String()}
	if err := s.admin(context.Background(), http.MethodPost, "/__sandbox/clock", body, http.StatusOK, nil); err != nil {
		t.Fatalf("sandboxtest: advance clock by %s: %v", d, err)
	}
}

// Reset puts the sandbox back as it started: records back to the fixtures,
// rules and scenarios cleared, journal emptied, real time, rate limits
// refilled. Tokens already issued stay valid.
func (s *Sandbox) Reset(t testing.TB) {
	t.Helper()
	if err := s.admin(context.Background(), http.MethodPost, "/__sandbox/reset", nil, http.StatusOK, nil); err != nil {
		t.Fatalf("sandboxtest: reset: %v", err)
	}
}

// admin sends one admin API request with body as JSON, expects status want
// and decodes the answer into into (when not nil). A nil body is no body on
// a GET and {} otherwise: the admin API refuses bodiless state changes.
func (s *Sandbox) admin(ctx context.Context, method, path string, body any, want int, into any) error {
	if body == nil && method != http.MethodGet && method != http.MethodHead {
		body = struct{}{}
	}
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.RootURL+path, reader)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.adminToken != "" {
		req.Header.Set("Authorization", "Bearer "+s.adminToken)
	}
	resp, err := s.httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, answer)
	}
	if into != nil {
		if err := json.Unmarshal(answer, into); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}
