package backend

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redisslot"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// redisPingTimeout bounds the PING at start: an unreachable Redis stops
// start-up at once rather than after a dial timeout per retry.
const redisPingTimeout = 3 * time.Second

// dialRedis connects to the Redis (--redis) or Redis Cluster
// (--redis-cluster) of the shared mode and checks it answers. Errors name
// host:port, never the URL, which may hold a password. It returns the
// client, its location for the ready line (RedisLocation or
// RedisClusterLocation) and its host:port (or the seeds) for errors.
func dialRedis(opts RedisConfig) (client redis.UniversalClient, location, addr string, err error) {
	// Every Redis call is bounded by --redis-timeout: go-redis's socket
	// timeouts (3s by default) would otherwise cut a long script short (a
	// Reset loading many records), and the store's context deadline is
	// only obeyed with ContextTimeoutEnabled. A URL's own read_timeout or
	// write_timeout is kept.
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = store.DefaultRedisTimeout
	}
	if opts.ClusterURL != "" {
		copts, err := parseRedisClusterURL(opts.ClusterURL)
		if err != nil {
			return nil, "", "", err
		}
		copts.ReadTimeout = orDefault(copts.ReadTimeout, timeout)
		copts.WriteTimeout = orDefault(copts.WriteTimeout, timeout)
		copts.ContextTimeoutEnabled = true
		if len(opts.NATMap) > 0 {
			nat, err := ParseRedisNATMap(opts.NATMap)
			if err != nil {
				return nil, "", "", err
			}
			copts.Dialer = natDialer(nat, copts)
		}
		cluster := redis.NewClusterClient(copts)
		if opts.Wait > 0 {
			// WAIT counts the replicas of the connection it is sent on,
			// so it goes to every node client: see redis_wait.go.
			cluster.OnNewNode(func(node *redis.Client) { node.AddHook(newWaitHook(node, opts.Wait, timeout, waitMarker(opts))) })
		}
		client, location, addr = cluster, RedisClusterLocation(opts.ClusterURL), strings.Join(copts.Addrs, ",")
	} else {
		ropts, err := parseRedisURL(opts.URL)
		if err != nil {
			return nil, "", "", err
		}
		ropts.ReadTimeout = orDefault(ropts.ReadTimeout, timeout)
		ropts.WriteTimeout = orDefault(ropts.WriteTimeout, timeout)
		ropts.ContextTimeoutEnabled = true
		single := redis.NewClient(ropts)
		if opts.Wait > 0 {
			single.AddHook(newWaitHook(single, opts.Wait, timeout, waitMarker(opts)))
		}
		client, location, addr = single, RedisLocation(opts.URL), ropts.Addr
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisPingTimeout)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		return nil, "", "", errors.Join(fmt.Errorf("redis at %s does not answer: %w", addr, err), client.Close())
	}
	return client, location, addr, nil
}

// waitMarker is the key waitHook writes after a transaction: under the
// sandbox's prefix, in the slot of the parts that use transactions (the
// journal, the clocks, the rules; the record store runs scripts only) on
// a cluster, so on the node that took the transaction.
func waitMarker(opts RedisConfig) string {
	prefix := opts.Prefix
	if prefix == "" {
		prefix = store.DefaultRedisPrefix
	}
	if opts.ClusterURL != "" {
		prefix = redisslot.Tag(prefix)
	}
	return prefix + "wait-marker"
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// parseRedisURL parses a redis:// or rediss:// URL with redis.ParseURL. Its
// errors may quote the URL, password included, so they are replaced by
// one naming only what is wrong.
func parseRedisURL(raw string) (*redis.Options, error) {
	u, err := checkRedisScheme("--redis", raw)
	if err != nil {
		return nil, err
	}
	ropts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("--redis %s: %s", RedisLocation(raw), hidePassword(u, err))
	}
	return ropts, nil
}

// parseRedisClusterURL parses a --redis-cluster URL with
// redis.ParseClusterURL, its errors cleaned as parseRedisURL's.
func parseRedisClusterURL(raw string) (*redis.ClusterOptions, error) {
	u, err := checkRedisScheme("--redis-cluster", raw)
	if err != nil {
		return nil, err
	}
	copts, err := redis.ParseClusterURL(raw)
	if err != nil {
		return nil, fmt.Errorf("--redis-cluster %s: %s", RedisClusterLocation(raw), hidePassword(u, err))
	}
	return copts, nil
}

func checkRedisScheme(flag, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not a URL; want redis://[:password@]host:port or rediss://[:password@]host:port", flag)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("%s must start with redis:// or rediss://, not %q", flag, u.Scheme+"://")
	}
	return u, nil
}

func hidePassword(u *url.URL, err error) string {
	msg := err.Error()
	if p, ok := u.User.Password(); ok && p != "" {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	return msg
}

// RedisLocation is where a --redis URL points, as logs and the ready line
// show it: scheme://host:port/db, without user name or password.
func RedisLocation(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = "0"
	}
	host := u.Host
	if u.Port() == "" && host != "" {
		host += ":6379"
	}
	return u.Scheme + "://" + host + "/" + db
}

// RedisClusterLocation is where a --redis-cluster URL points, as logs and
// the ready line show it: "cluster " and the seed nodes, without user name
// or password.
func RedisClusterLocation(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	addrs := append([]string{u.Host}, u.Query()["addr"]...)
	return "cluster " + u.Scheme + "://" + strings.Join(addrs, ",")
}
