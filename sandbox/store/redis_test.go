package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store/storetest"
)

// redisClient starts a private redis-server for t and returns a client of
// it, closed when t ends.
func redisClient(t testing.TB) *redis.Client {
	t.Helper()
	srv := redistest.Start(t)
	// No socket timeouts: each store operation's context deadline bounds
	// it, as --redis-timeout does in the sandbox.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, ReadTimeout: -1, WriteTimeout: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func mustOpenRedis(t testing.TB, c *redis.Client, opts ...store.RedisOption) *store.RedisStore {
	t.Helper()
	s, err := store.OpenRedis(c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConformanceRedis runs the conformance suite on one redis-server,
// each subtest under a prefix of its own: that the subtests never see
// each other's records also shows that prefixes separate sandboxes.
func TestConformanceRedis(t *testing.T) {
	c := redisClient(t)
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) store.Store {
		return mustOpenRedis(t, c, store.WithRedisPrefix(fmt.Sprintf("conformance-%d:", n.Add(1))))
	})
}

// TestRedisDownIsUnavailable: with Redis gone, every kind of store call
// fails with ErrUnavailable (the sandbox answers 503 with Retry-After),
// never with an error that reads as a bad request or a missing record.
func TestRedisDownIsUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	s := mustOpenRedis(t, c, store.WithRedisTimeout(2*time.Second))
	set, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reset(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	client := set.Clients[0].ClientID
	for name, call := range map[string]func() error{
		"Reset":       func() error { return s.Reset(context.Background(), set) },
		"ResetClient": func() error { return s.ResetClient(context.Background(), client, set) },
		"GetReferral": func() error { _, err := s.GetReferral(context.Background(), client, "x"); return err },
		"ListReferrals": func() error {
			_, _, err := s.ListReferrals(context.Background(), client, store.Page{Limit: 5})
			return err
		},
	} {
		if err := call(); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s with Redis down: %v, want ErrUnavailable", name, err)
		}
	}
}

// A write Redis refuses for want of memory is the backend unavailable
// (a 503 with Retry-After), not the sandbox's own error (a 500): the
// fault suite met such 500s while Redis reloaded its AOF after a kill.
func TestRedisWriteRefusedForMemoryIsUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.NewClient(t)
	st, err := store.OpenRedis(rdb)
	if err != nil {
		t.Fatal(err)
	}
	allowWrites := redistest.RefuseWrites(t, rdb)
	ref := referrals.Referral{OutcomesID: "oom-1", TrialID: "TRIAL-CARDIO-001", ClientID: "c", Status: referrals.StatusReceived, SubmittedAt: "2026-01-01T00:00:00.000000Z"}
	err = st.CreateReferral(context.Background(), ref)
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("create under maxmemory 1: %v, want ErrUnavailable", err)
	}
	allowWrites()
	if _, err := st.GetReferral(context.Background(), "c", "oom-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused referral reads %v, want not found", err)
	}
}
