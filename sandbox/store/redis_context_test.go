package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestRedisFollowsTheCallersContext: a call whose context has ended fails
// as unavailable (the sandbox's 503) without waiting for its timeout, so a
// request's cancellation and deadline reach Redis; a context detached from
// the ended one (context.WithoutCancel, as handlers give writes) still
// completes its call.
func TestRedisFollowsTheCallersContext(t *testing.T) {
	s := mustOpenRedis(t, redisClient(t))
	ref := referrals.Referral{OutcomesID: "ctx-1", TrialID: "TRIAL-CARDIO-001", ClientID: "c", Status: referrals.StatusReceived, SubmittedAt: "2026-01-01T00:00:00.000000Z"}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.CreateReferral(cancelled, ref); !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("create with a cancelled context: %v, want ErrUnavailable wrapping context.Canceled", err)
	}
	expired, cancelExpired := context.WithTimeout(context.Background(), 0)
	defer cancelExpired()
	if _, err := s.GetReferral(expired, "c", "ctx-1"); !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read past the context's deadline: %v, want ErrUnavailable wrapping context.DeadlineExceeded", err)
	}

	if err := s.CreateReferral(context.WithoutCancel(cancelled), ref); err != nil {
		t.Fatalf("create with the cancelled context detached: %v", err)
	}
	if _, err := s.GetReferral(context.Background(), "c", "ctx-1"); err != nil {
		t.Errorf("the detached create was not stored: %v", err)
	}
}
