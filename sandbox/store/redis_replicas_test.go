package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestRedisReplicasUpdateConcurrently: two stores with their own
// connections to one Redis, as two replicas have, update one record and
// read it with audited views at the same time. No update is lost and no
// audit entry is lost or duplicated: the compare-and-set retries.
func TestRedisReplicasUpdateConcurrently(t *testing.T) {
	first := redisClient(t)
	second := redis.NewClient(&redis.Options{Addr: first.Options().Addr, ContextTimeoutEnabled: true, ReadTimeout: -1, WriteTimeout: -1})
	t.Cleanup(func() { _ = second.Close() })
	replicas := []*store.RedisStore{mustOpenRedis(t, first), mustOpenRedis(t, second)}
	if err := replicas[0].CreateQualified(context.Background(), qualified("alice", "Q-1", "2025-10-13T09:00:01Z")); err != nil {
		t.Fatal(err)
	}
	if err := replicas[0].CreateReferral(context.Background(), referral("alice", "R-1", "2025-10-13T09:00:01Z")); err != nil {
		t.Fatal(err)
	}
	const perReplica = 15
	var wg sync.WaitGroup
	for r, s := range replicas {
		for i := range perReplica {
			wg.Add(3)
			go func() {
				defer wg.Done()
				_, err := s.UpdateQualified(context.Background(), "alice", "Q-1", func(q *referrals.QualifiedReferral) error {
					q.AuditTrail = append(q.AuditTrail, referrals.AuditEntry{At: "2025-10-13T10:00:00.000000Z", Action: referrals.AuditStatusChanged, Actor: fmt.Sprintf("r%d-%d", r, i)})
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}()
			go func() {
				defer wg.Done()
				view := referrals.AuditEntry{At: "2025-10-13T10:00:00.000000Z", Action: referrals.AuditViewed, Actor: "alice"}
				if _, err := s.GetQualified(context.Background(), "alice", "Q-1", &view); err != nil {
					t.Error(err)
				}
			}()
			go func() {
				defer wg.Done()
				_, err := s.UpdateReferral(context.Background(), "alice", "R-1", func(ref *referrals.Referral) error {
					ref.Notes += "x"
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	trail, next, err := replicas[1].QualifiedAuditTrail(context.Background(), "alice", "Q-1", store.Page{Limit: store.MaxLimit})
	if err != nil || next != "" {
		t.Fatalf("trail: %v, next %q", err, next)
	}
	seen := map[string]int{}
	for _, e := range trail {
		seen[e.Action+" "+e.Actor]++
	}
	want := 1 + 2*perReplica*2 // submitted, then per replica an update and a view each
	if len(trail) != want {
		t.Errorf("the trail holds %d entries, want %d", len(trail), want)
	}
	for r := range replicas {
		for i := range perReplica {
			if n := seen[fmt.Sprintf("%s r%d-%d", referrals.AuditStatusChanged, r, i)]; n != 1 {
				t.Errorf("update r%d-%d is in the trail %d times, want once", r, i, n)
			}
		}
	}
	ref, err := replicas[0].GetReferral(context.Background(), "alice", "R-1")
	if err != nil || len(ref.Notes) != 2*perReplica {
		t.Errorf("referral notes %q (%v): want %d updates kept", ref.Notes, err, 2*perReplica)
	}
}
