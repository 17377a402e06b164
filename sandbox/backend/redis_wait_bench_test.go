package backend

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// BenchmarkRedisWait measures what --redis-wait costs one record write on
// a 3-master cluster with a replica each (AOF, appendfsync always), all on
// this machine: go test -run '^$' -bench BenchmarkRedisWait ./sandbox/backend/
func BenchmarkRedisWait(b *testing.B) {
	cluster := redistest.StartCluster(b, 3, 1)
	run := 0
	for _, wait := range []int{0, 1} {
		b.Run(fmt.Sprintf("wait=%d", wait), func(b *testing.B) {
			opts := RedisConfig{ClusterURL: cluster.URL, Wait: wait, Prefix: fmt.Sprintf("bench-wait-%d:", wait)}
			client, _, _, err := dialRedis(opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = client.Close() })
			st, err := store.OpenRedis(client, store.WithRedisPrefix("{"+opts.Prefix+"}"))
			if err != nil {
				b.Fatal(err)
			}
			run++
			b.ResetTimer()
			for i := range b.N {
				err := st.CreateReferral(context.Background(), referrals.Referral{TrialID: "TRIAL-001", OutcomesID: fmt.Sprintf("R-%d-%d", run, i), ClientID: "client",
					Status: referrals.StatusReceived, SubmittedAt: "2025-10-13T09:00:00Z",
					Patient: referrals.Patient{FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1990-01-02", Gender: "female"}})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRedisWaitWithoutReplicaFails: with --redis-wait 1 and no replica to
// acknowledge it, a write fails (the sandbox answers 503) rather than
// being acknowledged unreplicated.
func TestRedisWaitWithoutReplicaFails(t *testing.T) {
	srv := redistest.Start(t)
	for _, tc := range []struct {
		wait    int
		wantErr bool
	}{{0, false}, {1, true}} {
		client, _, _, err := dialRedis(RedisConfig{URL: srv.URL, Wait: tc.wait, Timeout: 2 * time.Second}) // not less: the write without WAIT must not time out on a loaded machine
		if err != nil {
			t.Fatal(err)
		}
		st, err := store.OpenRedis(client, store.WithRedisPrefix(fmt.Sprintf("wait-%d:", tc.wait)))
		if err == nil {
			err = st.CreateReferral(context.Background(), referrals.Referral{TrialID: "TRIAL-001", OutcomesID: "R-1", ClientID: "client",
				Status: referrals.StatusReceived, SubmittedAt: "2025-10-13T09:00:00Z",
				Patient: referrals.Patient{FirstName: "Ada", LastName: "Lovelace", DateOfBirth: "1990-01-02", Gender: "female"}})
		}
		if (err != nil) != tc.wantErr {
			t.Errorf("--redis-wait %d with no replica: err %v, want error %v", tc.wait, err, tc.wantErr)
		}
		_ = client.Close()
	}
}
