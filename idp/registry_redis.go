package idp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// RedisClients is the ClientStore of replicas sharing Redis: one hash of
// the runtime clients' JSON by id, and a version every change bumps in the
// same script, so that no replica can miss a change another made (a
// separate bump once failed after the change, and replicas disagreed about
// a deleted client for good).
type RedisClients struct {
	rdb redis.UniversalClient
	// clients is the hash of clients; version the key replicas read.
	clients, version string
}

// RedisClientsVersionKey is the key of the version RedisClients bumps
// under prefix, which replicas read before each request.
func RedisClientsVersionKey(prefix string) string { return prefix + "clients:version" }

// NewRedisClients returns the runtime clients kept in rdb under prefix.
func NewRedisClients(rdb redis.UniversalClient, prefix string) *RedisClients {
	return &RedisClients{rdb: rdb, clients: prefix + "clients:runtime", version: RedisClientsVersionKey(prefix)}
}

// changeScript puts (ARGV: 'put', id, JSON) or deletes (ARGV: 'del', id)
// a client and bumps the version, atomically. KEYS: clients, version. The
// bump comes first: under maxmemory Redis refuses a script's first write
// that may grow memory (and then nothing is written) but never stops one
// part way, and a delete alone would not be refused.
var changeScript = redis.NewScript(`
local v = redis.call('INCR', KEYS[2])
if ARGV[1] == 'put' then redis.call('HSET', KEYS[1], ARGV[2], ARGV[3]) else redis.call('HDEL', KEYS[1], ARGV[2]) end
return v
`)

// PutClient stores or replaces c and announces it.
func (r *RedisClients) PutClient(ctx context.Context, c referrals.Client) error {
	if c.ClientID == "" {
		return fmt.Errorf("store client: clientId is empty")
	}
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode client %s: %w", c.ClientID, err)
	}
	if err := changeScript.Run(ctx, r.rdb, []string{r.clients, r.version}, "put", c.ClientID, data).Err(); err != nil {
		return fmt.Errorf("store client %s in redis: %w", c.ClientID, rediscall.MarkUnconfirmed(err))
	}
	return nil
}

// DeleteClient removes a client and announces it.
func (r *RedisClients) DeleteClient(ctx context.Context, clientID string) error {
	if err := changeScript.Run(ctx, r.rdb, []string{r.clients, r.version}, "del", clientID).Err(); err != nil {
		return fmt.Errorf("delete client %s from redis: %w", clientID, rediscall.MarkUnconfirmed(err))
	}
	return nil
}

// RuntimeClients returns every stored client.
func (r *RedisClients) RuntimeClients(ctx context.Context) ([]referrals.Client, error) {
	all, err := r.rdb.HGetAll(ctx, r.clients).Result()
	if err != nil {
		return nil, fmt.Errorf("list runtime clients in redis: %w", err)
	}
	out := make([]referrals.Client, 0, len(all))
	for id, data := range all {
		var c referrals.Client
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return nil, fmt.Errorf("decode runtime client %s: %w", id, err)
		}
		out = append(out, c)
	}
	return out, nil
}
