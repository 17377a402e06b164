package sandboxtest

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// AdvanceClock moves sandbox time forward by d (back when d is negative)
// for every client: tokens expire, and timestamps move, without waiting.
// The API refuses a token the second its exp passes.
func (s *Sandbox) AdvanceClock(t testing.TB, d time.Duration) {
	t.Helper()
	if err := s.AdvanceClockContext(context.Background(), d); err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
}

// AdvanceClockContext is AdvanceClock without a test.
func (s *Sandbox) AdvanceClockContext(ctx context.Context, d time.Duration) error {
	body := map[string]string{"advance": d.String()}
	if err := s.admin(ctx, http.MethodPost, "/__sandbox/clock", body, http.StatusOK, nil); err != nil {
		return fmt.Errorf("advance clock by %s: %w", d, err)
	}
	return nil
}

// AdvanceClientClock moves one client's time by d, leaving every other
// client's alone: its tokens expire, its records are stamped later.
func (s *Sandbox) AdvanceClientClock(t testing.TB, clientID string, d time.Duration) {
	t.Helper()
	if err := s.AdvanceClientClockContext(context.Background(), clientID, d); err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
}

// AdvanceClientClockContext is AdvanceClientClock without a test.
func (s *Sandbox) AdvanceClientClockContext(ctx context.Context, clientID string, d time.Duration) error {
	body := map[string]string{"clientId": clientID, "advance": d.String()}
	if err := s.admin(ctx, http.MethodPost, "/__sandbox/clock", body, http.StatusOK, nil); err != nil {
		return fmt.Errorf("advance the clock of %s by %s: %w", clientID, d, err)
	}
	return nil
}
