package sandbox_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redisslot"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestClusterKeySpread measures how one sandbox's keys spread over the
// shards of a 3-master cluster, laid out as --redis-cluster lays them: 100
// clients, each with 3 referrals, a moved clock and a rate-limit bucket.
// Each client's records and rate-limit bucket sit in the client's own
// slot, so they spread over every master with the clients; the record
// store's global keys sit in one slot, and so do the other shared parts'
// keys (the whole prefix is their hash tag), the clocks included. The figures are logged for docs/shared-mode.md (go test
// -v -run TestClusterKeySpread ./sandbox/).
func TestClusterKeySpread(t *testing.T) {
	t.Parallel() // on its own Redis
	cluster := redistest.StartCluster(t, 3, 0)
	rdb := cluster.NewClient(t)
	ctx := t.Context()
	const prefix, clients = "team:", 100
	st, err := store.OpenRedis(rdb, store.WithRedisPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	shared := redisslot.Tag(prefix)
	clocks := clock.NewRedis(rdb, clock.NewRedisKeys(shared), clock.NewPerClient(clock.NewAdjustable(nil)))
	limits := ratelimit.NewRedis(rdb, prefix+"ratelimit:")
	for c := range clients {
		client := fmt.Sprintf("client-%03d", c)
		for r := range 3 {
			err := st.CreateReferral(ctx, referrals.Referral{TrialID: "TRIAL-001", OutcomesID: fmt.Sprintf("R-%d", r), ClientID: client,
				Status: referrals.StatusReceived, SubmittedAt: "2025-10-13T09:00:00Z",
				Patient: referrals.Patient{FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1990-01-02", Gender: "female"}})
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := clocks.Advance(ctx, client, time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := limits.Take(ctx, client, "call-"+client, ratelimit.Limit{Rate: 1, Burst: 2}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}

	// Each key is counted under its hash tag: "c:<client>" (a client's
	// records and bucket), "g" (the record store's global keys) or "team:"
	// (the other shared parts).
	perMaster := map[string]map[string]int{} // master -> tag -> keys
	buckets := map[string]bool{}             // client tags holding a bucket
	var mu sync.Mutex                        // ForEachMaster calls fn on every master at once
	err = rdb.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		counts := map[string]int{}
		iter := node.Scan(ctx, 0, "*", 1000).Iterator()
		for iter.Next(ctx) {
			_, rest, _ := strings.Cut(iter.Val(), "{")
			tag, _, _ := strings.Cut(rest, "}")
			counts[tag]++
			if strings.HasPrefix(iter.Val(), prefix+"ratelimit:{c:") {
				mu.Lock()
				buckets[tag] = true
				mu.Unlock()
			}
		}
		mu.Lock()
		perMaster[node.Options().Addr] = counts
		mu.Unlock()
		return iter.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	home := map[string]string{}
	var lines []string
	for addr, counts := range perMaster {
		var clientKeys, clientsHere, global, other int
		for tag, n := range counts {
			if other, ok := home[tag]; ok && other != addr {
				t.Errorf("tag %s has keys on %s and %s: its scripts would cross slots", tag, other, addr)
			}
			home[tag] = addr
			switch {
			case strings.HasPrefix(tag, "c:"):
				clientKeys += n
				clientsHere++
			case tag == "g":
				global += n
			default:
				other += n
			}
		}
		lines = append(lines, fmt.Sprintf("master %s: %d clients (%d keys: records, generation, bucket, call), %d global record-store keys, %d keys of the shared slot (clocks...)",
			addr, clientsHere, clientKeys, global, other))
	}
	sort.Strings(lines)
	withClients := 0
	for _, counts := range perMaster {
		for tag := range counts {
			if strings.HasPrefix(tag, "c:") {
				withClients++
				break
			}
		}
	}
	if withClients != 3 {
		t.Errorf("the clients' records sit on %d of 3 masters, want all 3", withClients)
	}
	found := 0
	for tag := range home {
		if strings.HasPrefix(tag, "c:") {
			found++
		}
	}
	if found != clients {
		t.Errorf("found the keys of %d clients, want %d", found, clients)
	}
	if len(buckets) != clients {
		t.Errorf("found %d rate-limit buckets under their client's tag, want %d", len(buckets), clients)
	}
	t.Logf("%d clients on 3 masters:\n%s", clients, strings.Join(lines, "\n"))
}
