package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store/storetest"
)

func TestQuotaMemory(t *testing.T) {
	storetest.RunQuota(t, func(t *testing.T, q store.Quota) store.Store {
		return mustOpen(t, store.MemoryPath, store.WithQuota(q))
	})
}

func TestQuotaFile(t *testing.T) {
	storetest.RunQuota(t, func(t *testing.T, q store.Quota) store.Store {
		return mustOpen(t, filepath.Join(t.TempDir(), "data.db"), store.WithQuota(q))
	})
}

func TestQuotaRedis(t *testing.T) {
	c := redisClient(t)
	var n atomic.Int64
	storetest.RunQuota(t, func(t *testing.T, q store.Quota) store.Store {
		return mustOpenRedis(t, c, store.WithRedisPrefix(fmt.Sprintf("quota-%d:", n.Add(1))), store.WithRedisQuota(q))
	})
}

func TestQuotaRedisCluster(t *testing.T) {
	rdb := redistest.StartCluster(t, 3, 0).NewClient(t)
	var n atomic.Int64
	storetest.RunQuota(t, func(t *testing.T, q store.Quota) store.Store {
		s, err := store.OpenRedis(rdb, store.WithRedisPrefix(fmt.Sprintf("quota-%d:", n.Add(1))), store.WithRedisQuota(q))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestQuotaFileReopen: a data file's usage is counted again when it
// opens, so a restart does not give a client a fresh quota.
func TestQuotaFileReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	q := store.WithQuota(store.Quota{Records: 2})
	s := mustOpen(t, path, q)
	for i := range 2 {
		if err := s.CreateQualified(context.Background(), qualified("alice", fmt.Sprint("Q-", i), "2025-10-13T09:00:00Z")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, path, q)
	defer s.Close()
	if err := s.CreateReferral(context.Background(), referral("alice", "R-1", "2025-10-13T09:00:00Z")); err == nil {
		t.Errorf("create beyond the quota after a restart succeeded")
	}
}
