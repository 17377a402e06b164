// Package redisslot keeps the shared mode's keys in one Redis Cluster slot
// and finds the node that holds them.
//
// On a cluster, a Lua script, a MULTI or a WATCH may only touch keys of one
// hash slot. Every key the sandbox writes starts with its --redis-prefix;
// in cluster mode that prefix is wrapped in a hash tag ({prefix}), so every
// script, transaction and multi-key read keeps working unchanged and every
// guarantee of the single-Redis mode (one atomic script per change, its
// announcement included) holds as it is.
package redisslot

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Tag wraps prefix in a hash tag: "referrals-sandbox:" becomes
// "{referrals-sandbox:}". Redis hashes only what is between the first "{"
// and the next "}", so a prefix holding a brace is refused by ValidPrefix.
func Tag(prefix string) string { return "{" + prefix + "}" }

// ValidPrefix reports why prefix cannot be tagged, or nil.
func ValidPrefix(prefix string) error {
	if strings.ContainsAny(prefix, "{}") {
		return fmt.Errorf("--redis-prefix %q holds a brace: on a Redis Cluster the prefix is the keys' hash tag and must not hold { or }", prefix)
	}
	return nil
}

// ScanClient is the client a SCAN over keys sharing key's slot must use: a
// cluster client sends a SCAN to any node, so there it is the master that
// owns key's slot (asked again each time, so a failover is followed);
// any other client is returned as it is.
func ScanClient(ctx context.Context, rdb redis.UniversalClient, key string) (redis.Cmdable, error) {
	c, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return rdb, nil
	}
	node, err := c.MasterForKey(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("find the cluster node of %s: %w", key, err)
	}
	return node, nil
}
