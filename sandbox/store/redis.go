package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redisslot"
)

// DefaultRedisPrefix starts every key a RedisStore writes, unless
// WithRedisPrefix says otherwise.
const DefaultRedisPrefix = "referrals-sandbox:"

// DefaultRedisTimeout bounds one store operation on Redis (one script or
// command round trip), unless WithRedisTimeout says otherwise.
const DefaultRedisTimeout = 10 * time.Second

// RedisStore is the Redis implementation of Store, for the shared mode:
// several sandbox replicas on one Redis, or one Redis Cluster, see the same
// records.
//
// Key layout under the prefix P, with ids escaped (see escape) and the
// client as redisslot.ClientTag encodes it, so no part holds ':'. A
// client's keys share the hash tag {c:<client>},
// so on a cluster they share one slot and the clients spread over the
// shards; the global keys share the tag {g}. On a single Redis the tags
// change nothing, and the same layout serves both.
//
//	P{g}gen                    the current generation G (Reset writes a new
//	                           generation and flips it)
//	P{g}nextgen, P{g}building  generation counter; generations being built
//	P{g}flip, P{g}flipset      the flip in progress: its generation, and
//	                           the clients to flip (see redis_generations.go)
//	P{g}gG:clients             set of the client ids that may own a record
//	                           in G (a superset: Clients checks each)
//	P{g}gG:rc                  hash of runtime clients by escaped id
//	P{c:<client>}gen           the client's generation M: its scripts read
//	                           its records under M, in the same script
//	P{c:<client>}listed        the generation whose clients set lists it
//	P{c:<client>}gM:r:<id>     a referral's JSON
//	P{c:<client>}gM:q:<id>     a qualified referral's JSON, without trail
//	P{c:<client>}gM:ri, …:qi   sorted sets (all scores 0) of
//	                           "<submittedAt>:<id>", one per kind:
//	                           listings are ZREVRANGEBYLEX pages
//	P{c:<client>}gM:a:<id>     list of a qualified referral's audit entries
//
// Every change is one Lua script on one slot, which Redis runs
// atomically; updates whose Go callback must run read first and then
// commit with a compare-and-set script, retrying when another replica
// changed the record in between.
//
// Each call waits no longer than the caller's context allows, nor than
// the store's timeout (WithRedisTimeout). A script the context gave up on
// may still have run: the error wraps rediscall.ErrUnconfirmed (see
// unreachable).
type RedisStore struct {
	client  redis.UniversalClient
	prefix  string
	global  string // prefix of the global keys: P{g}
	genKey  string
	timeout time.Duration
	quota   Quota
}

var _ Store = (*RedisStore)(nil)

// RedisOption adjusts OpenRedis.
type RedisOption func(*RedisStore)

// WithRedisPrefix sets the key prefix, so that one Redis database holds
// several sandboxes. Two sandboxes' prefixes must not start one another.
func WithRedisPrefix(prefix string) RedisOption {
	return func(s *RedisStore) { s.prefix = prefix }
}

// WithRedisTimeout bounds each store operation with a context deadline.
// go-redis obeys it only with ContextTimeoutEnabled, and its socket read
// and write timeouts (3s by default) still cut an operation shorter, so a
// client meant for long scripts (a large Reset) sets them as long.
func WithRedisTimeout(d time.Duration) RedisOption {
	return func(s *RedisStore) { s.timeout = d }
}

// WithRedisQuota bounds what each client may store (see Quota), checked
// in the same script as the write. Default: no bound. Loading fixtures
// (Load, Seed, Reset, ResetClient) is never refused, but counts.
func WithRedisQuota(q Quota) RedisOption {
	return func(s *RedisStore) { s.quota = q }
}

// quotaArgs are the quota's bounds as the scripts take them (see
// luaQuota).
func quotaArgs(q Quota) []any { return []any{q.Records, q.Bytes} }

// OpenRedis opens the store on client, completes a Reset whose flip was
// interrupted and deletes what an interrupted Reset left behind
// (generations that are not current and not being built). The store does not own client: Close leaves it open for the other
// parts of the sandbox that share it.
func OpenRedis(client redis.UniversalClient, opts ...RedisOption) (*RedisStore, error) {
	s := &RedisStore{client: client, prefix: DefaultRedisPrefix, timeout: DefaultRedisTimeout}
	for _, o := range opts {
		o(s)
	}
	if s.prefix == "" {
		return nil, fmt.Errorf("open redis store: %w: empty key prefix", ErrInvalid)
	}
	if s.timeout <= 0 {
		return nil, fmt.Errorf("open redis store: %w: timeout must be positive", ErrInvalid)
	}
	if err := s.quota.check(); err != nil {
		return nil, fmt.Errorf("open redis store: %w", err)
	}
	s.global = s.prefix + "{g}"
	s.genKey = s.global + "gen"
	// Opening is start-up's, before any request: no caller's context to
	// follow, and each step is bounded by the store's timeout.
	ctx := context.Background()
	if err := s.refuseLegacyLayout(ctx); err != nil {
		return nil, fmt.Errorf("open redis store %q: %w", s.prefix, err)
	}
	if err := s.rollForward(ctx); err != nil {
		return nil, fmt.Errorf("open redis store %q: %w", s.prefix, err)
	}
	if err := s.deleteStaleGenerations(ctx); err != nil {
		return nil, fmt.Errorf("open redis store %q: %w", s.prefix, err)
	}
	return s, nil
}

// Close releases nothing: the client belongs to the caller.
func (s *RedisStore) Close() error { return nil }

// opContext is the context of one Redis operation: the caller's, so its
// cancellation and deadline reach the call, further bounded by the store's
// timeout.
func (s *RedisStore) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// run runs a script on the global slot, with the generation key as its
// only declared key and the global keys' prefix as its first argument. A
// nil reply (redis.Nil) is returned as ErrNotFound.
func (s *RedisStore) run(ctx context.Context, script *redis.Script, args ...any) (any, error) {
	return s.runOn(ctx, script, s.genKey, s.global, args, unreachable)
}

// clientBase is the prefix of the client's keys: P{c:<client>}, the
// client's hash tag (redisslot.ClientTag), which the rate-limit bucket of
// the client shares.
func (s *RedisStore) clientBase(clientID string) string {
	return s.prefix + redisslot.ClientTag(clientID)
}

// runClient runs a script on the client's slot, with the client's
// generation key as its only declared key and the client's prefix as its
// first argument.
func (s *RedisStore) runClient(ctx context.Context, clientID string, script *redis.Script, args ...any) (any, error) {
	base := s.clientBase(clientID)
	return s.runOn(ctx, script, base+"gen", base, args, unreachable)
}

// runClientRead is runClient for a call that changes nothing: its failure
// is never one that may have been stored (unreachableRead).
func (s *RedisStore) runClientRead(ctx context.Context, clientID string, script *redis.Script, args ...any) (any, error) {
	base := s.clientBase(clientID)
	return s.runOn(ctx, script, base+"gen", base, args, unreachableRead)
}

// runOn runs script; failed wraps its error (unreachable, or
// unreachableRead for a call that changes nothing).
func (s *RedisStore) runOn(ctx context.Context, script *redis.Script, key, base string, args []any, failed func(error) error) (any, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	res, err := script.Run(ctx, s.client, []string{key}, append([]any{base}, args...)...).Result()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if refused := quotaRefusal(err); refused != nil {
		return nil, refused
	}
	if err != nil {
		return nil, fmt.Errorf("redis: %w", failed(err))
	}
	return res, nil
}

// unreachable marks err ErrUnavailable unless Redis itself answered it
// with an error of the script's own (a bug, which stays a 500): a refused
// connection, a timeout, a closed client or a server that cannot serve
// now (see serverState) means the call may succeed once Redis is back.
// A timeout, a broken connection or a write its replicas did not confirm
// (--redis-wait) is also rediscall.ErrUnconfirmed: the write may have been
// stored (see rediscall.MarkUnconfirmed).
func unreachable(err error) error {
	if !unavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, rediscall.MarkUnconfirmed(err))
}

// unreachableRead is unreachable for a call that changes nothing: never
// unconfirmed, whatever its error.
func unreachableRead(err error) error {
	if !unavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// unavailable reports whether err is Redis failing rather than an error of
// the script's own (see unreachable).
func unavailable(err error) bool {
	var reply redis.Error
	return err != nil && (!errors.As(err, &reply) || serverState(reply))
}

// quotaRefusal turns a script's quota error reply (see luaQuota) into
// ErrQuota: the script refused the write before it wrote anything. Any
// other error, and none, give nil.
func quotaRefusal(err error) error {
	var reply redis.Error
	if err == nil || !errors.As(err, &reply) || !redis.HasErrorPrefix(reply, "QUOTA ") {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrQuota, strings.TrimPrefix(reply.Error(), "QUOTA "))
}

// serverStates are the error replies that say what state Redis is in, not
// what is wrong with the command: loading its data after a restart, out of
// memory, a replica promoted or demoted (UNBLOCKED: a master demoted while
// a --redis-wait WAIT was blocked on it), a cluster resharding, failing
// over (MOVED, ASK: a slot's owner changing while the nodes disagree) or
// down, a script or a failed save blocking writes. go-redis retries or
// redirects some of them a few times; when they outlast that the answer
// is a 503.
var serverStates = []string{"LOADING", "OOM", "BUSY", "MASTERDOWN", "READONLY", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "MISCONF", "UNBLOCKED", "MOVED", "ASK"}

// serverState reports whether reply is one of serverStates. Redis keeps a
// command's error code when a script's redis.call fails, so a write a
// script makes under maxmemory answers "OOM ...".
func serverState(reply redis.Error) bool {
	for _, code := range serverStates {
		if redis.HasErrorPrefix(reply, code+" ") {
			return true
		}
	}
	return false
}

// replyStrings converts a script's array reply: integers become their
// decimal form, nil elements "".
func replyStrings(v any) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("redis: unexpected reply %T", v)
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		switch x := e.(type) {
		case string:
			out[i] = x
		case int64:
			out[i] = fmt.Sprint(x)
		case nil:
		default:
			return nil, fmt.Errorf("redis: unexpected reply element %T", e)
		}
	}
	return out, nil
}
