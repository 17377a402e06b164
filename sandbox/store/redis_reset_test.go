package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// keysMatching lists the keys matching pattern.
func keysMatching(t *testing.T, c *redis.Client, pattern string) []string {
	t.Helper()
	keys, err := c.Keys(context.Background(), pattern).Result()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestRedisResetDropsOldGeneration: after Reset, the records are the set's
// and no key of the replaced content is left in Redis.
func TestRedisResetDropsOldGeneration(t *testing.T) {
	c := redisClient(t)
	s := mustOpenRedis(t, c, store.WithRedisPrefix("t:"))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.CreateReferral(context.Background(), referral("alice", "OLD-1", "2025-10-13T09:00:01Z")))
	must(s.CreateQualified(context.Background(), qualified("alice", "OLD-Q", "2025-10-13T09:00:01Z")))
	must(s.PutClient(context.Background(), referrals.Client{ClientID: "runtime-1"}))
	must(s.Reset(context.Background(), &fixtures.Set{Referrals: []referrals.Referral{referral("bob", "NEW-1", "2025-10-13T09:00:02Z")}}))

	if _, err := s.GetReferral(context.Background(), "bob", "NEW-1"); err != nil {
		t.Errorf("the set's referral after Reset: %v", err)
	}
	if clients, err := s.RuntimeClients(context.Background()); err != nil || len(clients) != 0 {
		t.Errorf("runtime clients after Reset: %v %v, want none", clients, err)
	}
	for _, k := range keysMatching(t, c, "t:*") {
		switch k {
		case "t:{g}gen", "t:{g}nextgen", "t:{c:alice}gen", "t:{c:bob}gen", "t:{c:bob}listed":
		default:
			if !strings.HasPrefix(k, "t:{g}g1:") && !strings.HasPrefix(k, "t:{c:bob}g1:") {
				t.Errorf("key %q left after Reset; only generation 1 and the generation keys should remain", k)
			}
		}
	}
}

// TestRedisOpenDeletesLeftovers is a Reset that died half-way: its new
// generation was written (registered as building long ago) but never made
// current, and an older generation was never deleted. Reads still see the
// current records; the next open deletes both leftovers but leaves alone a
// generation another replica started building a moment ago.
func TestRedisOpenDeletesLeftovers(t *testing.T) {
	c := redisClient(t)
	ctx := context.Background()
	s := mustOpenRedis(t, c, store.WithRedisPrefix("t:"))
	if err := s.CreateReferral(ctx, referral("alice", "KEPT", "2025-10-13T09:00:01Z")); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	leftovers := []string{"t:{c:alice}g7:r:DEAD", "t:{c:alice}g7:ri", "t:{c:alice}g3:r:OLD", "t:{g}g3:clients"}
	for _, k := range append(leftovers, "t:{c:alice}g9:r:BUILDING") {
		if err := c.Set(ctx, k, "{}", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.ZAdd(ctx, "t:{g}building", redis.Z{Score: float64(now - 3600), Member: "7"}, redis.Z{Score: float64(now), Member: "9"})

	if _, err := s.GetReferral(ctx, "alice", "DEAD"); err == nil {
		t.Error("a generation that was never made current is visible")
	}
	mustOpenRedis(t, c, store.WithRedisPrefix("t:"))
	for _, k := range leftovers {
		if n := c.Exists(ctx, k).Val(); n != 0 {
			t.Errorf("leftover %q survived open", k)
		}
	}
	if c.Exists(ctx, "t:{c:alice}g9:r:BUILDING").Val() != 1 {
		t.Error("open deleted a generation another replica is building")
	}
	if got, err := s.GetReferral(ctx, "alice", "KEPT"); err != nil || got.OutcomesID != "KEPT" {
		t.Errorf("current record after open: %+v %v", got, err)
	}
}
