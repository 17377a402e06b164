package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// flipBackends are the Redis setups the flip tests run on: one
// redis-server, and a 3-master cluster, where each client's records sit
// in the client's own slot.
func flipBackends(t *testing.T, run func(t *testing.T, rdb redis.UniversalClient)) {
	t.Run("single", func(t *testing.T) {
		t.Parallel()
		run(t, redistest.Start(t).NewClient(t))
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		run(t, redistest.StartCluster(t, 3, 0).NewClient(t))
	})
}

func flipReferral(client, id string) referrals.Referral {
	return referrals.Referral{TrialID: "TRIAL-001", OutcomesID: id, ClientID: client,
		Status: referrals.StatusReceived, SubmittedAt: "2025-10-13T09:00:00Z"}
}

func openFlipStore(t *testing.T, rdb redis.UniversalClient) *RedisStore {
	t.Helper()
	s, err := OpenRedis(rdb, WithRedisPrefix("flip:"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// beginFlip is a Reset to set cut short once its flip has moved the given
// clients (in that order): it answers the new generation.
func beginFlip(t *testing.T, s *RedisStore, set *fixtures.Set, flipOnly ...string) string {
	t.Helper()
	records, err := redisSet(set)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.run(context.Background(), beginGenerationScript)
	if err != nil {
		t.Fatal(err)
	}
	gen := fmt.Sprint(res)
	if err := s.build(context.Background(), gen, records); err != nil {
		t.Fatal(err)
	}
	if _, err := s.run(context.Background(), startFlipScript, gen); err != nil {
		t.Fatal(err)
	}
	for _, c := range flipOnly {
		if _, err := s.runClient(context.Background(), c, flipClientScript, gen, "1"); err != nil {
			t.Fatal(err)
		}
	}
	return gen
}

func wantReferral(t *testing.T, s *RedisStore, client, id string, want bool) {
	t.Helper()
	_, err := s.GetReferral(context.Background(), client, id)
	switch {
	case want && err != nil:
		t.Errorf("referral %s of %s: %v, want it", id, client, err)
	case !want && !errors.Is(err, ErrNotFound):
		t.Errorf("referral %s of %s: %v, want not found", id, client, err)
	}
}

func wantClients(t *testing.T, s *RedisStore, want ...string) {
	t.Helper()
	got, err := s.Clients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) && len(got)+len(want) > 0 {
		t.Errorf("Clients() = %q, want %q", got, want)
	}
}

// TestRedisInterruptedFlipCompletedAtOpen: a Reset that died after its
// flip moved one client of two leaves that client on the new records and
// the other on the old, each whole; the next open completes the flip and
// deletes the old generation.
func TestRedisInterruptedFlipCompletedAtOpen(t *testing.T) {
	flipBackends(t, func(t *testing.T, rdb redis.UniversalClient) {
		s := openFlipStore(t, rdb)
		for _, r := range []referrals.Referral{flipReferral("alice", "OLD-A"), flipReferral("bob", "OLD-B1"), flipReferral("bob", "OLD-B2")} {
			if err := s.CreateReferral(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		beginFlip(t, s, &fixtures.Set{Referrals: []referrals.Referral{flipReferral("alice", "NEW-A"), flipReferral("bob", "NEW-B"), flipReferral("carol", "NEW-C")}}, "alice")

		wantReferral(t, s, "alice", "NEW-A", true)
		wantReferral(t, s, "alice", "OLD-A", false)
		wantReferral(t, s, "bob", "OLD-B1", true)
		wantReferral(t, s, "bob", "OLD-B2", true)
		wantReferral(t, s, "bob", "NEW-B", false)

		s = openFlipStore(t, rdb)
		wantReferral(t, s, "alice", "NEW-A", true)
		wantReferral(t, s, "bob", "NEW-B", true)
		wantReferral(t, s, "bob", "OLD-B1", false)
		wantReferral(t, s, "carol", "NEW-C", true)
		wantClients(t, s, "alice", "bob", "carol")
		if keys := generationKeys(t, s, "0"); len(keys) > 0 {
			t.Errorf("keys of the replaced generation left after open: %q", keys)
		}
	})
}

// TestRedisInterruptedFlipCompletedByReset: a Reset finds another's flip
// cut short, completes it, then makes its own set current.
func TestRedisInterruptedFlipCompletedByReset(t *testing.T) {
	flipBackends(t, func(t *testing.T, rdb redis.UniversalClient) {
		s := openFlipStore(t, rdb)
		if err := s.CreateReferral(context.Background(), flipReferral("alice", "OLD-A")); err != nil {
			t.Fatal(err)
		}
		first := beginFlip(t, s, &fixtures.Set{Referrals: []referrals.Referral{flipReferral("bob", "NEW-B")}}, "bob")
		if err := s.Reset(context.Background(), &fixtures.Set{Referrals: []referrals.Referral{flipReferral("carol", "LAST-C")}}); err != nil {
			t.Fatal(err)
		}
		wantReferral(t, s, "alice", "OLD-A", false)
		wantReferral(t, s, "bob", "NEW-B", false)
		wantReferral(t, s, "carol", "LAST-C", true)
		wantClients(t, s, "carol")
		for _, gen := range []string{"0", first} {
			if keys := generationKeys(t, s, gen); len(keys) > 0 {
				t.Errorf("keys of replaced generation %s left: %q", gen, keys)
			}
		}
	})
}

// TestRedisCreateDuringFlipKept: a client's first record, created while a
// Reset's flip is under way, is acknowledged after the Reset began: it
// joins the flip, is kept, and the client is listed.
func TestRedisCreateDuringFlipKept(t *testing.T) {
	flipBackends(t, func(t *testing.T, rdb redis.UniversalClient) {
		s := openFlipStore(t, rdb)
		if err := s.CreateReferral(context.Background(), flipReferral("alice", "OLD-A")); err != nil {
			t.Fatal(err)
		}
		beginFlip(t, s, &fixtures.Set{Referrals: []referrals.Referral{flipReferral("bob", "NEW-B")}})
		if err := s.CreateReferral(context.Background(), flipReferral("dave", "LATE-D")); err != nil {
			t.Fatal(err)
		}
		if err := s.rollForward(context.Background()); err != nil {
			t.Fatal(err)
		}
		wantReferral(t, s, "dave", "LATE-D", true)
		wantReferral(t, s, "alice", "OLD-A", false)
		wantClients(t, s, "bob", "dave")
		if got, err := s.FindReferral(context.Background(), "LATE-D"); err != nil || got.ClientID != "dave" {
			t.Errorf("FindReferral(LATE-D) = %+v, %v", got, err)
		}
	})
}

// generationKeys lists the store's keys of generation gen, on every node.
func generationKeys(t *testing.T, s *RedisStore, gen string) []string {
	t.Helper()
	var keys []string
	ch := make(chan string, 1000)
	done := make(chan struct{})
	go func() {
		for k := range ch {
			keys = append(keys, k)
		}
		close(done)
	}()
	err := s.scanGenerations(context.Background(), func(_ context.Context, _ redis.Cmdable, key, g string) error {
		if g == gen {
			ch <- key
		}
		return nil
	})
	close(ch)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
