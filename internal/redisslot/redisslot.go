// Package redisslot lays the shared mode's keys out over Redis Cluster
// slots and finds the nodes that hold them.
//
// On a cluster, a Lua script, a MULTI or a WATCH may only touch keys of one
// hash slot. The record store keys each client's records under a hash tag
// of that client, and its global state under a tag of its own (see
// store.RedisStore); the other shared parts still wrap the whole
// --redis-prefix in one hash tag ({prefix}), so their scripts and
// transactions keep working unchanged.
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
		return fmt.Errorf("--redis-prefix %q holds a brace: on a Redis Cluster the keys' hash tags follow the prefix, which must not hold { or }", prefix)
	}
	return nil
}

// ClientTag is the hash tag of a client's keys: "{c:" and the client id,
// with '%', ':', '{', '}' and control characters percent-encoded, then
// "}". Keys of one client that carry it share that client's slot, whatever
// part of the sandbox writes them; the encoding keeps the tag whole (a
// brace would end it early) and the id free of ':' (the key separator).
func ClientTag(clientID string) string {
	var b strings.Builder
	b.WriteString("{c:")
	for i := 0; i < len(clientID); i++ {
		c := clientID[i]
		if c == '%' || c == ':' || c == '{' || c == '}' || c < 0x20 || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteString("}")
	return b.String()
}

// ForEachNode calls fn with every node that holds keys: each master of a
// cluster, at once from several goroutines (go-redis's ForEachMaster), or
// rdb itself. A SCAN, or a command on keys the SCAN found, sent to the node
// fn is given reaches the keys of that node.
func ForEachNode(ctx context.Context, rdb redis.UniversalClient, fn func(ctx context.Context, node redis.Cmdable) error) error {
	if c, ok := rdb.(*redis.ClusterClient); ok {
		return c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return fn(ctx, node) })
	}
	return fn(ctx, rdb)
}
