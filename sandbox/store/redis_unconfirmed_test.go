package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestRedisWriteThatTimesOutIsUnconfirmed: a write whose answer does not
// come in time (Redis stalled, frozen) may have been stored, and its error
// says so (rediscall.ErrUnconfirmed, besides ErrUnavailable): once Redis
// resumes, the write it had received is there. A write Redis refused (its
// server down) was never stored, but says so too: go-redis returns only
// its last retry's error, and with the sandbox's retries a refusal may
// follow a first send whose reply was lost
// (TestRedisWriteWhoseReplyIsLostIsUnconfirmed), so the refusal alone
// cannot prove the write was not stored.
func TestRedisWriteThatTimesOutIsUnconfirmed(t *testing.T) {
	tests := []struct {
		name        string
		fault       func(t *testing.T, srv *redistest.Server) (heal func())
		unconfirmed bool
		stored      bool // the write reached Redis before the fault
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
		}, true, true},
		{"down: the connection is refused", func(t *testing.T, srv *redistest.Server) func() {
			srv.Stop(t)
			return func() { srv.Restart(t) }
		}, true, false},
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
			if err := s.CreateReferral(context.Background(), referral("alice", "R-0", "2025-10-13T09:00:00Z")); err != nil {
				t.Fatal(err)
			}
			heal := tc.fault(t, srv)
			err := s.CreateReferral(context.Background(), referral("alice", "R-1", "2025-10-13T09:00:01Z"))
			if !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("write: %v, want ErrUnavailable", err)
			}
			if got := errors.Is(err, rediscall.ErrUnconfirmed); got != tc.unconfirmed {
				t.Errorf("write: %v: unconfirmed %v, want %v", err, got, tc.unconfirmed)
			}
			heal()
			_, err = s.GetReferral(context.Background(), "alice", "R-1")
			if tc.stored && err != nil {
				t.Errorf("the unconfirmed write, read back once Redis resumed: %v, want it stored", err)
			}
			if !tc.stored && !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the refused write, read back once Redis is back: %v, want not found", err)
			}
		})
	}
}

// TestRedisWriteWhoseReplyIsLostIsUnconfirmed: a create that ran on Redis,
// whose node then died before answering (the connection closed before
// the reply, and go-redis's own retries met refused connections), may have
// been stored, and its error says so (rediscall.ErrUnconfirmed, besides
// ErrUnavailable): it was stored, and reads back once Redis is back.
func TestRedisWriteWhoseReplyIsLostIsUnconfirmed(t *testing.T) {
	proxy, c, s := storeBehindFaultProxy(t)
	err := loseScriptReply(t, proxy, c, func() error {
		return s.CreateQualified(context.Background(), qualified("alice", "Q-1", "2025-10-13T09:00:01Z"))
	})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("create whose reply was lost: %v, want ErrUnavailable", err)
	}
	if !errors.Is(err, rediscall.ErrUnconfirmed) {
		t.Errorf("create whose reply was lost: %v, want rediscall.ErrUnconfirmed: it may have been stored", err)
	}
	if _, err := s.GetQualified(context.Background(), "alice", "Q-1", nil); err != nil {
		t.Errorf("the create whose reply was lost, read back once Redis is back: %v, want it stored", err)
	}
}

// TestRedisUpdateWhoseReadFailsIsNotUnconfirmed: an update whose first
// call, the read of the record, loses its reply and meets refused
// connections changed nothing: its error is ErrUnavailable only, never
// rediscall.ErrUnconfirmed (a read cannot have stored anything), and the
// record is as it was.
func TestRedisUpdateWhoseReadFailsIsNotUnconfirmed(t *testing.T) {
	proxy, c, s := storeBehindFaultProxy(t)
	err := loseScriptReply(t, proxy, c, func() error {
		_, err := s.UpdateQualified(context.Background(), "alice", "Q-0", func(q *referrals.QualifiedReferral) error {
			q.Status = referrals.StatusWithdrawn
			return nil
		})
		return err
	})
	if !errors.Is(err, store.ErrUnavailable) || errors.Is(err, rediscall.ErrUnconfirmed) {
		t.Errorf("update whose read failed: %v, want ErrUnavailable and not rediscall.ErrUnconfirmed: nothing was written", err)
	}
	if got, err := s.GetQualified(context.Background(), "alice", "Q-0", nil); err != nil || got.Status != referrals.StatusReceived {
		t.Errorf("the record after the failed update: %v, %v; want it unchanged (%s)", got.Status, err, referrals.StatusReceived)
	}
}

// loseScriptReply runs op while the fault proxy lets the next script call
// run on Redis, loses its reply and refuses every connection until go-redis
// has met more refusals than it retries (or op has ended); it returns op's
// error. The test fails if no script passed the proxy.
func loseScriptReply(t *testing.T, proxy *redistest.FaultProxy, c *redis.Client, op func() error) error {
	t.Helper()
	proxy.ArmMatching(func(cmd []string) bool { return strings.HasPrefix(cmd[0], "EVAL") }, 1, redistest.LoseReplyThenRefuse)
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		err = op()
	}()
	proxy.HealAfterRefusals(c.Options().MaxRetries+1, done)
	<-done
	if !proxy.Fired() {
		t.Fatal("the fault proxy never lost a script's reply")
	}
	return err
}

// storeBehindFaultProxy opens a Redis store through a fault proxy, with
// go-redis's default retries as the sandbox's client has, holding alice's
// qualified referral Q-0. That first write loads the scripts and registers
// the client, so a later write of alice's is one script call.
func storeBehindFaultProxy(t *testing.T) (*redistest.FaultProxy, *redis.Client, *store.RedisStore) {
	t.Helper()
	srv := redistest.Start(t)
	proxy := redistest.NewFaultProxy(t, srv)
	c := proxy.NewClient(t, time.Second)
	s := mustOpenRedis(t, c)
	if err := s.CreateQualified(context.Background(), qualified("alice", "Q-0", "2025-10-13T09:00:00Z")); err != nil {
		t.Fatal(err)
	}
	return proxy, c, s
}
