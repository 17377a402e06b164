package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redisslot"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// clusterFaultKinds are the faults of the cluster run: the replicas'
// own, their links to the nodes (each replica reaches every node through
// its own proxy, named to it by --redis-cluster-nat-map), and the Redis
// nodes of one of the sandbox's slots (slotKeys).
var clusterFaultKinds = []string{
	"latency", "reset_peer", "partition", "replica_sigstop", "replica_sigkill",
	"master_sigkill_failover", "master_sigstop_failover", "shard_replica_sigkill",
}

// slotKeys are keys in the slots whose shards the node faults hit, one
// picked at random each time: the shared parts' slot (the whole default
// prefix is its hash tag: clocks, rules, journal, runtime clients), each
// partner's slot (its records and rate-limit bucket), and the record
// store's global slot (generations, clients set).
var slotKeys = []string{
	"{referrals-sandbox:}",
	"referrals-sandbox:" + redisslot.ClientTag(partners[0].id),
	"referrals-sandbox:" + redisslot.ClientTag(partners[1].id),
	"referrals-sandbox:{g}",
}

// TestFaultsCluster is TestFaults on a Redis Cluster of 3 masters, each
// with a replica, the replicas started with --redis-cluster and
// --redis-wait 1 (FAULTS_REDIS_WAIT changes it): the same workload and
// checkers, under latency, resets and partitions of one replica's links
// to every node, the replicas' SIGSTOP and SIGKILL and, on the shard
// holding one of the sandbox's slots, a master SIGKILLed or SIGSTOPped until its
// replica takes over (then restarted, or resumed, as the new master's
// replica) and the shard's replica SIGKILLed and restarted. It runs only
// with FAULTS_DURATION set.
func TestFaultsCluster(t *testing.T) {
	duration := faultsDuration(t)
	wait := "1"
	if w := os.Getenv("FAULTS_REDIS_WAIT"); w != "" {
		wait = w
	}
	cluster := redistest.StartCluster(t, 3, 1)
	h := &faultHarness{t: t, cluster: cluster, c: newClient(32), faults: map[string]int{}, kinds: clusterFaultKinds}
	h.c.Timeout = faultRequestTimeout
	server := newToxiproxyServer()
	for i := range 3 {
		var proxies []*toxiproxy.Proxy
		var natMap []string
		for j, node := range cluster.Nodes {
			proxy := startProxy(t, server, fmt.Sprintf("replica-%d-node-%d", i, j), node.Addr)
			proxies = append(proxies, proxy)
			natMap = append(natMap, node.Addr+"="+proxy.Listen)
		}
		h.addReplica(proxies, "--redis-cluster", cluster.URL, "--redis-cluster-nat-map", strings.Join(natMap, ","), "--redis-wait", wait)
	}
	t.Logf("cluster: 3 masters + 3 replicas, --redis-wait %s", wait)
	runFaults(t, h, duration)
}

// injectCluster applies one fault of the cluster run's own for window,
// on the shard of slotKey, then waits until the cluster is whole again.
func (h *faultHarness) injectCluster(kind, slotKey string, window time.Duration) {
	t := h.t
	switch kind {
	case "master_sigkill_failover":
		// The master dies; its replica takes over once
		// cluster-node-timeout (2s) has passed; the old master comes back
		// on its AOF as the new master's replica.
		master := h.cluster.MasterOf(t, slotKey)
		successor := h.shardReplica(master)
		h.failingOver()
		master.Kill(t)
		h.awaitMaster(successor)
		time.Sleep(window / 2)
		master.Restart(t)
	case "master_sigstop_failover":
		// Stopped longer than cluster-node-timeout: the replica takes
		// over, and the old master, resumed, learns it is demoted.
		master := h.cluster.MasterOf(t, slotKey)
		successor := h.shardReplica(master)
		h.failingOver()
		master.Freeze(t)
		h.awaitMaster(successor)
		time.Sleep(window / 2)
		master.Thaw(t)
	case "shard_replica_sigkill":
		// With --redis-wait 1 every write of the shard answers 503 until
		// the replica is back.
		replica := h.shardReplica(h.cluster.MasterOf(t, slotKey))
		replica.Kill(t)
		time.Sleep(window)
		replica.Restart(t)
	default:
		panic("unknown fault " + kind)
	}
	h.cluster.WaitHealthy(t)
}

// shardReplica is the node replicating master.
func (h *faultHarness) shardReplica(master *redistest.Server) *redistest.Server {
	return h.cluster.ReplicaOf(h.t, master)
}

// awaitMaster waits until s reports itself a master (its failover done).
func (h *faultHarness) awaitMaster(s *redistest.Server) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if role := redistest.Role(s); len(role) > 0 && role[0] == "master" {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s did not take over as master within 30s", s.Addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
