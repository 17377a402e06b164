package backend

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// TestRedisWaitDecisionReachesItsRequest: with --redis-wait 1 and the
// replica of the sandbox's shard stopped, a times: 1 rule's decision is
// made on the master but cannot be acknowledged; once the replica is back
// (within the stall Decide rides out), the request that made it gets the
// forced answer, rather than a 503 that leaves the count spent and no
// client forced (found by TestFaultsCluster: a perClient rule forced 49
// of 50 answers, an after rule let through and forced 98 of 100).
func TestRedisWaitDecisionReachesItsRequest(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 1)
	const prefix = "{wait-decide:}"
	client, _, _, err := dialRedis(RedisConfig{ClusterURL: cluster.URL, Prefix: "wait-decide:", Wait: 1, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	engine := scenarios.NewRedis(client, prefix, 0, scenarios.Config{})
	ctx := t.Context()
	added, err := engine.Add(ctx, scenarios.Rule{Endpoint: scenarios.EndpointAPI, Path: "/api/v1/referrals/trials", Status: http.StatusForbidden, Times: 1})
	if err != nil {
		t.Fatal(err)
	}
	master := cluster.MasterOf(t, prefix)
	replica := cluster.ReplicaOf(t, master)
	replica.Freeze(t) // it acknowledges nothing until thawed
	t.Cleanup(func() { replica.Thaw(t) })

	type decided struct {
		fired bool
		err   error
	}
	direct := master.NewClient(t)
	waits := func() int {
		stats, err := direct.Info(context.Background(), "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		_, after, _ := strings.Cut(stats, "cmdstat_wait:calls=")
		n, _ := strconv.Atoi(strings.SplitN(after, ",", 2)[0])
		return n
	}
	done := make(chan decided, 1)
	go func() {
		_, fired, err := engine.Decide(ctx, scenarios.Request{Method: http.MethodGet, Path: "/api/v1/referrals/trials", ClientID: "sandbox-partner", Endpoint: scenarios.EndpointAPI})
		done <- decided{fired, err}
	}()
	// Thaw the replica once the decision is made (the rule, spent, is gone
	// from the master) and the WAIT after it has ended short of replicas,
	// or once Decide has ended.
	var got decided
	ended := false
	poll := func(waiting func() bool) {
		for !ended && waiting() {
			select {
			case got = <-done:
				ended = true
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	poll(func() bool { return direct.HExists(context.Background(), prefix+"scenarios:rules", added.ID).Val() })
	before := waits()
	poll(func() bool { return waits() == before })
	replica.Thaw(t)
	if !ended {
		got = <-done
	}
	if got.err != nil || !got.fired {
		t.Errorf("Decide while the replica was down, then back: fired %v, err %v; want the forced answer its count was spent on", got.fired, got.err)
	}
}

// TestRedisWaitDecisionDeliveredWhenReplicasNeverConfirm: with the
// shard's replica stopped for longer than Decide rides out, the decision
// the master made and holds is still delivered: a 503 would leave a
// times: 1 rule spent and no request forced (TestFaultsCluster: a
// perClient rule forced 49 of 50 while a failed-over master had no
// replica yet).
func TestRedisWaitDecisionDeliveredWhenReplicasNeverConfirm(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 1)
	const prefix = "{wait-never:}"
	client, _, _, err := dialRedis(RedisConfig{ClusterURL: cluster.URL, Prefix: "wait-never:", Wait: 1, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	engine := scenarios.NewRedis(client, prefix, 0, scenarios.Config{})
	ctx := t.Context()
	// The rule is added by a replica without --redis-wait: on a cluster
	// just started, or under -race, a WAIT of 200 ms may fall short, and
	// only the decision is under test.
	adder, _, _, err := dialRedis(RedisConfig{ClusterURL: cluster.URL, Prefix: "wait-never:"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adder.Close() })
	if _, err := scenarios.NewRedis(adder, prefix, 0, scenarios.Config{}).Add(ctx, scenarios.Rule{Endpoint: scenarios.EndpointAPI, Path: "/api/v1/referrals/trials", Status: http.StatusForbidden, Times: 1}); err != nil {
		t.Fatal(err)
	}
	replica := cluster.ReplicaOf(t, cluster.MasterOf(t, prefix))
	replica.Freeze(t)
	t.Cleanup(func() { replica.Thaw(t) })
	req := scenarios.Request{Method: http.MethodGet, Path: "/api/v1/referrals/trials", ClientID: "sandbox-partner", Endpoint: scenarios.EndpointAPI}
	if _, fired, err := engine.Decide(ctx, req); err != nil || !fired {
		t.Errorf("Decide with the replica stopped throughout: fired %v, err %v; want the forced answer the master decided", fired, err)
	}
}

// TestRedisWaitRateLimitTokenDeliveredWhenReplicasNeverConfirm: as a rule
// decision, a rate-limit token spent on a master whose replica never
// confirms it (--redis-wait) is the request's: answering 503 would leave
// the token spent and the request refused.
func TestRedisWaitRateLimitTokenDeliveredWhenReplicasNeverConfirm(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 1)
	const prefix = "wait-never-rl:ratelimit:" // untagged, as the sandbox gives it: each bucket takes its client's tag
	client, _, _, err := dialRedis(RedisConfig{ClusterURL: cluster.URL, Prefix: "wait-never-rl:", Wait: 1, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	store := ratelimit.NewRedis(client, prefix)
	for _, replica := range cluster.Nodes[cluster.Masters:] {
		replica.Freeze(t)
		t.Cleanup(func() { replica.Thaw(t) })
	}
	d, err := ratelimit.New(store).Take(t.Context(), "sandbox-partner", ratelimit.Limit{Rate: 1, Burst: 3}, time.Now())
	if err != nil || !d.Allowed || d.Remaining() != 2 {
		t.Errorf("Take with the replica stopped throughout: %+v, err %v; want allowed with 2 tokens left, as the master decided", d, err)
	}
}
