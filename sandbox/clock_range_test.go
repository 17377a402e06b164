package sandbox_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// inEachMode runs test against a sandbox that runs alone and against one
// in shared mode on a private Redis (with its Redis store), as the admin
// calls it checks behave alike in both.
func inEachMode(t *testing.T, test func(t *testing.T, opts ...sandboxOption)) {
	t.Run("embedded", func(t *testing.T) { test(t) })
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		test(t, useRedis(srv.NewClient(t)), useRedisStore(t, srv.Addr, "referrals-sandbox:"))
	})
}

// TestClockMovesStayInRange: a move that would take a clock where tokens
// cannot follow (before 1970, or past what the clock's offset holds) is a
// 422 naming the field and the range, and changes nothing; the sandbox
// never issues a token it would refuse.
func TestClockMovesStayInRange(t *testing.T) {
	inEachMode(t, func(t *testing.T, opts ...sandboxOption) {
		s := newSandbox(t, opts...)
		for _, tc := range []struct {
			name  string
			body  map[string]any
			field string
		}{
			{"advance past the range", map[string]any{"advance": "2562047h"}, "advance"},
			{"advance back past 1970", map[string]any{"advance": "-2562047h"}, "advance"},
			{"set in 9999", map[string]any{"set": "9999-12-31T23:59:59Z"}, "set"},
			{"set before 1970", map[string]any{"set": "1969-01-01T00:00:00Z"}, "set"},
			{"a client's clock before 1970", map[string]any{"set": "1969-01-01T00:00:00Z", "clientId": partner}, "set"},
		} {
			r := s.adminInvalid(http.MethodPost, "/__sandbox/clock", tc.body)
			if r.Status != http.StatusUnprocessableEntity {
				t.Errorf("%s: %d %s, want 422", tc.name, r.Status, r.Body)
				continue
			}
			p := r.problem(t)
			if len(p.Errors) != 1 || p.Errors[0].Field != tc.field || !strings.Contains(p.Errors[0].Message, "1970-01-01T00:00:00Z to 2200-01-01T00:00:00Z") {
				t.Errorf("%s: errors %+v, want one naming %q and the range", tc.name, p.Errors, tc.field)
			}
		}
		// Twice the largest advance the range allows is refused the second time.
		s.moveClock(map[string]any{"advance": "1000000h"})
		if r := s.adminInvalid(http.MethodPost, "/__sandbox/clock", map[string]any{"advance": "1000000h"}); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("a second advance of 1000000h: %d %s, want 422", r.Status, r.Body)
		}
		// The earliest time allowed still issues tokens the sandbox accepts.
		s.moveClock(map[string]any{"set": "1970-01-01T00:00:00Z"})
		tok := s.token(partner)
		if r := s.trials(tok); r.Status != http.StatusOK {
			t.Errorf("a token issued at 1970-01-01: %d %s", r.Status, r.Body)
		}
		s.moveClock(map[string]any{"set": "2200-01-01T00:00:00Z"})
		if r := s.trials(s.token(partner)); r.Status != http.StatusOK {
			t.Errorf("a token issued at 2200-01-01: %d %s", r.Status, r.Body)
		}
	})
}

// TestExpiredClientStaysGoneWhenTheClockMovesBack: a client whose ttl ran
// out does not come back when the clock is moved back before anything
// cleaned it up: every clock move deletes the clients expired before it.
func TestExpiredClientStaysGoneWhenTheClockMovesBack(t *testing.T) {
	inEachMode(t, func(t *testing.T, opts ...sandboxOption) {
		s := newSandbox(t, opts...)
		c := s.newClient(map[string]any{"ttl": "10m"})
		tok := s.clientToken(c)
		s.advance(11 * 60e9)
		s.advance(-11 * 60e9)
		if r := s.trials(tok); r.Status != http.StatusUnauthorized {
			t.Errorf("token of an expired client after the clock moved back: %d %s", r.Status, r.Body)
		}
		if r := s.admin(http.MethodGet, "/__sandbox/clients/"+c.ClientID, nil); r.Status != http.StatusNotFound {
			t.Errorf("expired client after the clock moved back: %d %s", r.Status, r.Body)
		}
		checkEntraError(t, s.tokenResponse(c.ClientID, c.ClientSecret, apiScope), http.StatusUnauthorized, "invalid_client")
	})
}
