package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

// faultKinds are the faults the nemesis injects, one at a time.
var faultKinds = []string{
	"latency", "reset_peer", "partition", "replica_sigstop", "replica_sigkill",
	"redis_sigstop", "redis_sigkill_aof_restart",
}

// nemesis injects one fault after another until duration has passed,
// each for a window of one to three seconds, then heals it and waits a
// second of calm.
func (h *faultHarness) nemesis(duration time.Duration) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 24))
	end := time.Now().Add(duration)
	for time.Now().Before(end) {
		kind := h.kinds[rng.IntN(len(h.kinds))]
		r := h.replica(rng.IntN(len(h.replicas)))
		window := time.Second + time.Duration(rng.Int64N(int64(2*time.Second)))
		h.inject(kind, r, slotKeys[rng.IntN(len(slotKeys))], window)
		h.mu.Lock()
		h.faults[kind]++
		h.mu.Unlock()
		time.Sleep(time.Second)
	}
}

// inject applies one fault to r (or to Redis, or on a cluster to the
// shard of slotKey) for window, then heals it.
func (h *faultHarness) inject(kind string, r *faultReplica, slotKey string, window time.Duration) {
	switch kind {
	case "latency":
		h.toxic(r, "latency", `{"latency": 300, "jitter": 200}`, window)
	case "reset_peer":
		h.toxic(r, "reset_peer", `{"timeout": 0}`, window)
	case "partition":
		// timeout 0: data is held and the connection stays open, as when
		// a network partition drops every packet.
		h.toxic(r, "timeout", `{"timeout": 0}`, window)
	case "replica_sigstop":
		h.signal(r, syscall.SIGSTOP)
		time.Sleep(window)
		h.signal(r, syscall.SIGCONT)
	case "replica_sigkill":
		h.kill(r)
		time.Sleep(window / 2)
		h.start(r)
	case "redis_sigstop":
		// Longer than --redis-timeout (2s): commands time out on the
		// client and still run when Redis resumes (issue 24's case).
		h.redis.Freeze(h.t)
		time.Sleep(window + 2*time.Second)
		h.redis.Thaw(h.t)
	case "redis_sigkill_aof_restart":
		h.redis.Kill(h.t)
		time.Sleep(window / 2)
		h.redis.Restart(h.t)
	default:
		h.injectCluster(kind, slotKey, window)
	}
}

// toxic adds a toxic of typ to both directions of each of r's links to
// Redis (one per cluster node on a cluster) for window.
func (h *faultHarness) toxic(r *faultReplica, typ, attributes string, window time.Duration) {
	type added struct {
		proxy *toxiproxy.Proxy
		name  string
	}
	var toxics []added
	for _, proxy := range r.proxies {
		for _, stream := range []string{"downstream", "upstream"} {
			name := fmt.Sprintf("%s-%s", typ, stream)
			body := fmt.Sprintf(`{"name": %q, "type": %q, "stream": %q, "attributes": %s}`, name, typ, stream, attributes)
			if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
				h.t.Errorf("add toxic %s to %s: %v", name, proxy.Name, err)
				continue
			}
			toxics = append(toxics, added{proxy, name})
		}
	}
	time.Sleep(window)
	for _, x := range toxics {
		if err := x.proxy.Toxics.RemoveToxic(context.Background(), x.name); err != nil {
			h.t.Errorf("remove toxic %s from %s: %v", x.name, x.proxy.Name, err)
		}
	}
}

// heal waits until every replica answers its health check again.
func (h *faultHarness) heal() {
	for _, r := range h.replicas {
		deadline := time.Now().Add(30 * time.Second)
		for {
			a, err := do(h.t.Context(), h.c, "GET", r.base()+"/__sandbox/health", "", "", nil, nil)
			if err == nil && a.status == 200 {
				break
			}
			if time.Now().After(deadline) {
				h.t.Fatalf("replica %s is not healthy 30s after the last fault", r.base())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
