package sandboxtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// maxBodyBytes bounds what the helpers read of a sandbox answer; a journal
// page of requestsPageSize entries fits within it however large each entry
// is (see journal.Entry.Size).
const maxBodyBytes = 64 << 20

// The helpers go through the admin API over HTTP, exactly as a partner's
// tooling or CI script would, so they also work with WithAdminToken.

// Reset puts the sandbox back as it started: records back to the fixtures,
// rules and scenarios cleared, journal emptied, real time, rate limits
// refilled. Tokens already issued stay valid. Parallel tests share the
// sandbox, so they use ResetClient on a client of their own instead.
func (s *Sandbox) Reset(t testing.TB) {
	t.Helper()
	if err := s.ResetContext(context.Background()); err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
}

// ResetContext is Reset without a test: for a TestMain that shares one
// sandbox, between runs.
func (s *Sandbox) ResetContext(ctx context.Context) error {
	if err := s.admin(ctx, http.MethodPost, "/__sandbox/reset", nil, http.StatusOK, nil); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	return nil
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
		return &refusal{method: method, path: path, status: resp.StatusCode, statusText: resp.Status, answer: answer}
	}
	if into != nil {
		if err := json.Unmarshal(answer, into); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}

// refusal is an admin API answer other than the one expected, with the
// sandbox's reason; its status lets a helper accept a particular refusal
// (a client deleted twice is already gone).
type refusal struct {
	method, path string
	status       int
	statusText   string
	answer       []byte
}

// Error names the request and gives the status and the sandbox's answer.
func (r *refusal) Error() string {
	return fmt.Sprintf("%s %s: %s: %s", r.method, r.path, r.statusText, r.answer)
}
