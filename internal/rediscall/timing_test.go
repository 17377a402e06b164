package rediscall_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
)

// TestOptions: a single client's own options; a cluster client's retries
// multiplied by its redirections (each of MaxRedirects+1 sends retried
// MaxRetries times by its node client); go-redis's defaults for a client
// of another kind. No client here connects: only options are read.
func TestOptions(t *testing.T) {
	single := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: 5, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second, MaxRetryBackoff: time.Second})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, MaxRetries: 2, MaxRedirects: 3,
		ReadTimeout: 2 * time.Second, WriteTimeout: time.Second, MaxRetryBackoff: 300 * time.Millisecond})
	clusterDefaults := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	for _, c := range []interface{ Close() error }{single, cluster, clusterDefaults, ring} {
		t.Cleanup(func() { _ = c.Close() })
	}
	// timing is what Options promises, of the fields go-redis has.
	type timing struct {
		MaxRetries                                 int
		ReadTimeout, WriteTimeout, MaxRetryBackoff time.Duration
	}
	tests := []struct {
		name string
		rdb  redis.UniversalClient
		want timing
	}{
		{"single client", single, timing{MaxRetries: 5, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second, MaxRetryBackoff: time.Second}},
		{"cluster: 4 sends of 3 attempts", cluster, timing{MaxRetries: 11, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second, MaxRetryBackoff: 300 * time.Millisecond}},
		// go-redis's cluster defaults: no retries by the node clients, 3
		// redirections, timeouts of 3 s.
		{"cluster defaults: 4 sends of 1 attempt", clusterDefaults, timing{MaxRetries: 3, ReadTimeout: 3 * time.Second, WriteTimeout: 3 * time.Second, MaxRetryBackoff: 512 * time.Millisecond}},
		{"another client: go-redis's defaults", ring, timing{MaxRetries: 3, ReadTimeout: 3 * time.Second, WriteTimeout: 3 * time.Second, MaxRetryBackoff: 512 * time.Millisecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := rediscall.Options(tc.rdb)
			got := timing{MaxRetries: o.MaxRetries, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout, MaxRetryBackoff: o.MaxRetryBackoff}
			if got != tc.want {
				t.Errorf("Options: retries %d, read %v, write %v, backoff %v; want retries %d, read %v, write %v, backoff %v",
					got.MaxRetries, got.ReadTimeout, got.WriteTimeout, got.MaxRetryBackoff,
					tc.want.MaxRetries, tc.want.ReadTimeout, tc.want.WriteTimeout, tc.want.MaxRetryBackoff)
			}
		})
	}
}

// TestStallBudgetAndCallTTL: a request rides a stall as long as go-redis
// waits for one command's answers (every attempt's read timeout), or not
// at all when reads never time out; an answer is kept past that, past all
// of go-redis's retries of the last send (a timeout of 0 counting as a
// minute), and a 10 s margin.
func TestStallBudgetAndCallTTL(t *testing.T) {
	tests := []struct {
		name      string
		o         redis.Options
		wantStall time.Duration
		wantTTL   time.Duration
	}{
		{"go-redis defaults", redis.Options{MaxRetries: 3, ReadTimeout: 3 * time.Second, WriteTimeout: 3 * time.Second, MaxRetryBackoff: 512 * time.Millisecond},
			12 * time.Second, 12*time.Second + 4*(6512*time.Millisecond) + 10*time.Second},
		{"no retries (-1)", redis.Options{MaxRetries: -1, ReadTimeout: time.Second, WriteTimeout: time.Second},
			time.Second, time.Second + 2*time.Second + 10*time.Second},
		{"reads never time out", redis.Options{MaxRetries: 1, ReadTimeout: -1, WriteTimeout: time.Second, MaxRetryBackoff: time.Second},
			0, 2*(time.Minute+2*time.Second) + 10*time.Second},
		{"no timeouts at all", redis.Options{MaxRetries: 0},
			0, 2*time.Minute + 10*time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rediscall.StallBudget(&tc.o); got != tc.wantStall {
				t.Errorf("StallBudget = %v, want %v", got, tc.wantStall)
			}
			if got := rediscall.CallTTL(&tc.o); got != tc.wantTTL {
				t.Errorf("CallTTL = %v, want %v", got, tc.wantTTL)
			}
		})
	}
}
