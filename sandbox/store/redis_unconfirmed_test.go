package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestRedisWriteThatTimesOutIsUnconfirmed: a write whose answer does not
// come in time (Redis stalled, frozen) may have been stored, and its error
// says so (rediscall.ErrUnconfirmed, besides ErrUnavailable): once Redis
// resumes, the write it had received is there. A write Redis refused (its
// server down) is unavailable only: it was never stored.
func TestRedisWriteThatTimesOutIsUnconfirmed(t *testing.T) {
	tests := []struct {
		name        string
		fault       func(t *testing.T, srv *redistest.Server) (heal func())
		unconfirmed bool
	}{
		{"stalled: the answer times out", func(t *testing.T, srv *redistest.Server) func() {
			srv.Freeze(t)
			frozen := true
			t.Cleanup(func() {
				if frozen {
					srv.Thaw(t)
				}
			})
			return func() { srv.Thaw(t); frozen = false }
		}, true},
		{"down: the connection is refused", func(t *testing.T, srv *redistest.Server) func() {
			srv.Stop(t)
			return func() { srv.Restart(t) }
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			// No retries: the store's context deadline (WithRedisTimeout)
			// bounds the call, as --redis-timeout does in the sandbox.
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, ContextTimeoutEnabled: true})
			t.Cleanup(func() { _ = c.Close() })
			s := mustOpenRedis(t, c, store.WithRedisTimeout(300*time.Millisecond))
			// A first write of the same client loads the scripts and
			// registers the client, so the write under test is one
			// script call.
			if err := s.CreateReferral(referral("alice", "R-0", "2025-10-13T09:00:00Z")); err != nil {
				t.Fatal(err)
			}
			heal := tc.fault(t, srv)
			err := s.CreateReferral(referral("alice", "R-1", "2025-10-13T09:00:01Z"))
			if !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("write: %v, want ErrUnavailable", err)
			}
			if got := errors.Is(err, rediscall.ErrUnconfirmed); got != tc.unconfirmed {
				t.Errorf("write: %v: unconfirmed %v, want %v", err, got, tc.unconfirmed)
			}
			heal()
			_, err = s.GetReferral("alice", "R-1")
			if tc.unconfirmed && err != nil {
				t.Errorf("the unconfirmed write, read back once Redis resumed: %v, want it stored", err)
			}
			if !tc.unconfirmed && !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the refused write, read back once Redis is back: %v, want not found", err)
			}
		})
	}
}
