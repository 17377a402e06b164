package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// redisPingTimeout bounds the PING at start: an unreachable Redis stops
// start-up at once rather than after a dial timeout per retry.
const redisPingTimeout = 3 * time.Second

// openStore opens the Redis store with --redis, else the data file or
// memory.
func (in *Instance) openStore(opts Options) error {
	if opts.RedisURL == "" {
		var err error
		in.store, err = openStore(opts.DataFile, opts.Logger)
		return err
	}
	if opts.DataFile != "" {
		return errors.New("--data and --redis exclude each other: the records live in one place")
	}
	client, st, err := openRedis(opts)
	if err != nil {
		return err
	}
	in.Redis, in.store, in.SharedMode = client, st, RedisLocation(opts.RedisURL)
	return nil
}

// openRedis connects to the Redis of the shared mode (--redis), checks it
// answers and opens the record store on it. Errors name host:port, never
// the URL, which may hold a password.
func openRedis(opts Options) (*redis.Client, *store.RedisStore, error) {
	ropts, err := parseRedisURL(opts.RedisURL)
	if err != nil {
		return nil, nil, err
	}
	// Every Redis call is bounded by --redis-timeout: go-redis's socket
	// timeouts (3s by default) would otherwise cut a long script short (a
	// Reset loading many records), and the store's context deadline is
	// only obeyed with ContextTimeoutEnabled. A URL's own read_timeout or
	// write_timeout is kept.
	timeout := opts.RedisTimeout
	if timeout == 0 {
		timeout = store.DefaultRedisTimeout
	}
	if ropts.ReadTimeout == 0 {
		ropts.ReadTimeout = timeout
	}
	if ropts.WriteTimeout == 0 {
		ropts.WriteTimeout = timeout
	}
	ropts.ContextTimeoutEnabled = true
	client := redis.NewClient(ropts)
	ctx, cancel := context.WithTimeout(context.Background(), redisPingTimeout)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("redis at %s does not answer: %w", ropts.Addr, err), client.Close())
	}
	var storeOpts []store.RedisOption
	if opts.RedisPrefix != "" {
		storeOpts = append(storeOpts, store.WithRedisPrefix(opts.RedisPrefix))
	}
	if opts.RedisTimeout != 0 {
		storeOpts = append(storeOpts, store.WithRedisTimeout(opts.RedisTimeout))
	}
	st, err := store.OpenRedis(client, storeOpts...)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("redis at %s: %w", ropts.Addr, err), client.Close())
	}
	return client, st, nil
}

// parseRedisURL parses a redis:// or rediss:// URL with redis.ParseURL. Its
// errors may quote the URL, password included, so they are replaced by
// one naming only what is wrong.
func parseRedisURL(raw string) (*redis.Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("--redis is not a URL; want redis://[:password@]host:port/db or rediss://...")
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("--redis must start with redis:// or rediss://, not %q", u.Scheme+"://")
	}
	ropts, err := redis.ParseURL(raw)
	if err != nil {
		msg := err.Error()
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "xxxxx")
		}
		return nil, fmt.Errorf("--redis %s: %s", RedisLocation(raw), msg)
	}
	return ropts, nil
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
