package journal_test

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal/journaltest"
)

// TestRedisClusterJournalConformance runs the suite on a 3-master Redis
// Cluster, each journal under its own hash-tagged prefix, as
// --redis-cluster lays keys.
func TestRedisClusterJournalConformance(t *testing.T) {
	rdb := redistest.StartCluster(t, 3, 0).NewClient(t)
	prefix := redistest.Prefixes("journal")
	journaltest.Run(t, func(t *testing.T, n int, b int64) journal.Log {
		return journal.NewRedis(rdb, prefix(), n, b)
	}, 25)
}
