package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redisslot"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// TestFailoverLossWindow measures what a master failover loses (issue
// 24): on a Redis Cluster of 3 masters with a replica each, six writers
// submit referrals through two replicas while the master of the
// writing partner's slot (its records') is SIGKILLed FAILOVER_ROUNDS
// times, its replica taking
// over each time and the old master rejoining as its replica; then every
// acknowledged referral is read back. It runs once with --redis-wait 0
// and once with 1, each on its own prefix. With 1, no acknowledged
// referral may be missing; with 0 the loss is the measured window, only
// logged. It runs only with FAILOVER_ROUNDS set (e.g. 3).
func TestFailoverLossWindow(t *testing.T) {
	rounds, err := strconv.Atoi(os.Getenv("FAILOVER_ROUNDS"))
	if err != nil || rounds <= 0 {
		t.Skip("set FAILOVER_ROUNDS (e.g. 3) to measure the failover loss window")
	}
	cluster := redistest.StartCluster(t, 3, 1)
	for _, wait := range []int{0, 1} {
		t.Run(fmt.Sprintf("redis-wait=%d", wait), func(t *testing.T) {
			prefix := fmt.Sprintf("loss-%d:", wait)
			h := &faultHarness{t: t, cluster: cluster, c: newClient(32), faults: map[string]int{}}
			h.c.Timeout = faultRequestTimeout
			for range 2 {
				h.addReplica(nil, "--redis-cluster", cluster.URL, "--redis-wait", strconv.Itoa(wait), "--redis-prefix", prefix)
			}
			acked, lost, unavailable := h.measureLoss(rounds, prefix+redisslot.ClientTag(partners[0].id))
			t.Logf("--redis-wait %d: %d failovers, %d referrals acknowledged, %d answers 503, %d acknowledged referrals lost", wait, rounds, len(acked), unavailable, len(lost))
			if wait > 0 && len(lost) > 0 {
				t.Errorf("with --redis-wait %d, %d acknowledged referrals were lost: %v", wait, len(lost), lost[:min(len(lost), 5)])
			}
		})
	}
}

// measureLoss writes through h's replicas while failing over the master
// of slotKey rounds times, and returns the acknowledged referrals, the
// count of 503 answers and the acknowledged ones then missing.
func (h *faultHarness) measureLoss(rounds int, slotKey string) (acked, lost []string, unavailable int64) {
	t := h.t
	var mu sync.Mutex
	var n503 atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := h.replica(w + i)
				body, _ := json.Marshal(referralRequest{TrialID: "TRIAL-CARDIO-001", Notes: fmt.Sprintf("loss-w%d-%d", w, i),
					Patient: referrals.Patient{FirstName: "Kim", LastName: "Loss", DateOfBirth: "1970-01-01", Gender: "unknown"}})
				a, err := do(t.Context(), h.c, http.MethodPost, r.base()+"/api/v1/referrals/", r.tokens[0], jsonType, body, nil)
				switch {
				case err != nil:
				case a.status == http.StatusCreated:
					mu.Lock()
					acked = append(acked, a.header.Get("Location"))
					mu.Unlock()
				case a.status == http.StatusServiceUnavailable && a.header.Get("Retry-After") != "":
					n503.Add(1)
				default:
					t.Errorf("POST through %s: %d %s%s", r.base(), a.status, truncate(a.body), h.logged(a))
				}
			}
		})
	}
	for range rounds {
		time.Sleep(time.Second)
		master := h.cluster.MasterOf(t, slotKey)
		successor := h.shardReplica(master)
		master.Kill(t)
		h.awaitMaster(successor)
		master.Restart(t)
		h.cluster.WaitHealthy(t)
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	for i, key := range acked {
		r := h.replica(i)
		for attempt := 0; ; attempt++ {
			a, err := h.get(r, key, r.tokens[0])
			if err == nil && a.status == http.StatusOK {
				break
			}
			if err == nil && a.status == http.StatusNotFound {
				lost = append(lost, key)
				break
			}
			if attempt == 50 {
				t.Fatalf("read %s back: %v %d %s", key, err, a.status, truncate(a.body))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return acked, lost, n503.Load()
}
