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
	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redisslot"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestClusterKeySpread measures how a sandbox's keys spread over the
// shards of a 3-master cluster: eight sandboxes (--redis-prefix team-1: to
// team-8:), each with 100 clients holding records, a moved clock and a
// rate-limit bucket. Every key of one sandbox must sit on one master (its
// scripts need them in one slot); the sandboxes spread over the masters.
// The figures are logged for docs/shared-mode.md (go test -v -run
// TestClusterKeySpread ./sandbox/).
func TestClusterKeySpread(t *testing.T) {
	t.Parallel() // on its own Redis
	cluster := redistest.StartCluster(t, 3, 0)
	rdb := cluster.NewClient(t)
	ctx := t.Context()
	const sandboxes, clients = 8, 100
	for i := 1; i <= sandboxes; i++ {
		prefix := redisslot.Tag(fmt.Sprintf("team-%d:", i))
		st, err := store.OpenRedis(rdb, store.WithRedisPrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
		clocks := clock.NewRedis(rdb, clock.NewRedisKeys(prefix), clock.NewPerClient(clock.NewAdjustable(nil)))
		limits := ratelimit.NewRedis(rdb, prefix+"ratelimit:")
		for c := range clients {
			client := fmt.Sprintf("client-%03d", c)
			for r := range 3 {
				err := st.CreateReferral(fixtures.Referral{TrialID: "TRIAL-001", OutcomesID: fmt.Sprintf("R-%d", r), ClientID: client,
					Status: fixtures.StatusReceived, SubmittedAt: "2025-10-13T09:00:00Z",
					Patient: fixtures.Patient{FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1990-01-02", Gender: "female"}})
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := clocks.Advance(ctx, client, time.Hour); err != nil {
				t.Fatal(err)
			}
			if _, err := limits.Swap(ctx, client, "call-"+client, ratelimit.State{}, false, ratelimit.State{Tokens: 1, At: time.Now()}, ratelimit.Decision{Allowed: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	perMaster := map[string]map[string]int{} // master -> sandbox -> keys
	var mu sync.Mutex                        // ForEachMaster calls fn on every master at once
	err := rdb.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		counts := map[string]int{}
		iter := node.Scan(ctx, 0, "*", 1000).Iterator()
		for iter.Next(ctx) {
			tag, _, _ := strings.Cut(strings.TrimPrefix(iter.Val(), "{"), "}")
			counts[tag]++
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
		total := 0
		var names []string
		for tag, n := range counts {
			total += n
			names = append(names, fmt.Sprintf("%s%d", tag, n))
			if other, ok := home[tag]; ok && other != addr {
				t.Errorf("sandbox %s has keys on %s and %s: its scripts would cross slots", tag, other, addr)
			}
			home[tag] = addr
		}
		sort.Strings(names)
		lines = append(lines, fmt.Sprintf("master %s: %d keys (%s)", addr, total, strings.Join(names, ", ")))
	}
	sort.Strings(lines)
	if len(home) != sandboxes {
		t.Errorf("found keys of %d sandboxes, want %d: %v", len(home), sandboxes, home)
	}
	t.Logf("%d sandboxes x %d clients on 3 masters:\n%s", sandboxes, clients, strings.Join(lines, "\n"))
}
