package backend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redisslot"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/ratelimit"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// RedisConfig is where the shared mode keeps its state: --redis,
// --redis-cluster and the flags that go with them.
type RedisConfig struct {
	// URL (--redis) is one Redis, shared by every replica given the same
	// URL and prefix.
	URL string
	// ClusterURL (--redis-cluster) is a Redis Cluster, in go-redis's
	// ParseClusterURL form (redis://[:password@]host:port?addr=host2:port2);
	// it excludes URL. Every key then carries a hash tag, so each script
	// and transaction stays within one slot: the record store's tags are
	// its clients' (see store.RedisStore), the other parts' the prefix.
	ClusterURL string
	// NATMap (--redis-cluster-nat-map) maps the addresses the cluster's
	// nodes announce to those this replica reaches them at, as
	// ANNOUNCED=REACHABLE host:port pairs (see ParseRedisNATMap).
	NATMap []string
	// Wait, when positive, follows every write with WAIT Wait: the write
	// is acknowledged only once that many replicas have it, or it fails.
	Wait int
	// Prefix starts every key (default store.DefaultRedisPrefix), so that
	// one Redis database holds several sandboxes.
	Prefix string
	// Timeout bounds each Redis operation (default
	// store.DefaultRedisTimeout).
	Timeout time.Duration
}

func (rc RedisConfig) named() bool { return rc.URL != "" || rc.ClusterURL != "" }

// openRedis dials the Redis or cluster of cfg.Redis and opens every part
// there.
func openRedis(ctx context.Context, cfg Config) (*Backend, error) {
	rc := cfg.Redis
	if rc.URL != "" && rc.ClusterURL != "" {
		return nil, errors.New("--redis and --redis-cluster exclude each other: the shared state lives on one Redis or one cluster")
	}
	if rc.Wait < 0 {
		return nil, errors.New("--redis-wait must not be negative")
	}
	rc.Prefix = prefixOr(rc.Prefix)
	if rc.ClusterURL != "" {
		if err := redisslot.ValidPrefix(rc.Prefix); err != nil {
			return nil, err
		}
	}
	client, location, addr, err := dialRedis(rc)
	if err != nil {
		return nil, err
	}
	storeOpts := []store.RedisOption{store.WithRedisPrefix(rc.Prefix), store.WithRedisQuota(cfg.Quota)}
	if rc.Timeout != 0 {
		storeOpts = append(storeOpts, store.WithRedisTimeout(rc.Timeout))
	}
	records, err := store.OpenRedis(client, storeOpts...)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("redis at %s: %w", addr, err), client.Close())
	}
	cfg.Redis = rc
	b, err := Shared(ctx, cfg, client, records)
	if err != nil {
		return nil, errors.Join(err, records.Close(), client.Close())
	}
	b.Location, b.own = location, client
	b.closers = append(b.closers, records.Close, client.Close)
	return b, nil
}

func prefixOr(prefix string) string {
	if prefix == "" {
		return store.DefaultRedisPrefix
	}
	return prefix
}

// Shared builds a backend whose every part but records lives in rdb under
// cfg.Redis.Prefix; the caller keeps rdb and records (and closes them).
// On a cluster client the parts other than the record store keep their
// keys in one slot, the whole prefix being their hash tag; the rate limit
// buckets, kept per client, carry their client's tag after the prefix as
// given. Runtime clients an earlier release kept in records move to rdb.
func Shared(ctx context.Context, cfg Config, rdb redis.UniversalClient, records store.Store) (*Backend, error) {
	b, local, err := newParts(cfg, records)
	if err != nil {
		return nil, err
	}
	clientPrefix := prefixOr(cfg.Redis.Prefix)
	prefix := clientPrefix
	if _, cluster := rdb.(*redis.ClusterClient); cluster {
		prefix = redisslot.Tag(clientPrefix)
	}
	b.Library.UseSaved(scenarios.NewRedisSaved(rdb, prefix))
	rules, err := local.Shared(ctx, rdb, prefix, sharedSettle)
	if err != nil {
		return nil, fmt.Errorf("shared mode: %w", err)
	}
	b.Rules = rules
	size, bytes := journalBounds(cfg)
	b.Journal = journal.NewRedis(rdb, prefix, size, bytes)
	clients := idp.NewRedisClients(rdb, prefix)
	if err := carryOverClients(ctx, records, clients); err != nil {
		return nil, fmt.Errorf("shared mode: %w", err)
	}
	b.Clients = clients
	keys := sharedKeys{
		clock:          clock.NewRedisKeys(prefix),
		clientsVersion: idp.RedisClientsVersionKey(prefix),
		rulesVersion:   rules.VersionKey(),
	}
	b.sync = newSharedState(rdb, keys, b.ClientClocks)
	b.Clocks = b.sync.clock
	b.Buckets = ratelimit.NewRedis(rdb, clientPrefix+"ratelimit:")
	return b, nil
}
