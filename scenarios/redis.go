package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
)

// redisKeysPart follows the sandbox's --redis-prefix in every key the
// shared engine keeps in Redis.
const redisKeysPart = "scenarios:"

// RedisEngine is the Engine that replicas behind one load balancer share:
// rules, activations and counters live in Redis, so counting is exact
// across replicas. Rule definitions and activations change only through
// admin calls, which run as optimistic transactions on the version key (see
// mutate); counting runs in fireScript, exactly once per call (see
// redis_decide.go). Each replica caches the rule list, and its match index,
// keyed by the version. The sandbox reads the version with the rest of its
// per-request state and hands it to Decide (WithRulesVersion), so a request
// never sees a stale list and, with no rule matching, costs the rules no
// round trip at all.
type RedisEngine struct {
	*perRequest
	cfg Config
	rdb redis.UniversalClient
	// Keys, all under the prefix given to NewRedis.
	keys                                         string
	verKey, orderKey, defsKey, actsKey, idSeqKey string
	// settle is how long a change waits, once stored, before it returns.
	settle time.Duration
	// callTTL is how long a fire script's decision is kept for a retry of
	// the same call (see rediscall.CallTTL).
	callTTL time.Duration
	// stallBudget is how long Decide rides out a stall (see rediscall.Budget).
	stallBudget time.Duration

	// The cached rules, as an index of entries that are read-only once
	// cached (their counters live in Redis), and the version they are of.
	mu    sync.Mutex
	ver   int64
	valid bool
	index *ruleIndex
}

var _ Engine = (*RedisEngine)(nil)

// storedRule is a rule definition as kept in the defs hash.
type storedRule struct {
	Rule    Rule      `json:"rule"`
	Binding string    `json:"binding,omitempty"`
	AddedAt time.Time `json:"addedAt"`
	// StartedAt is when a timeline started, on its own clock.
	StartedAt time.Time `json:"startedAt,omitzero"`
}

// NewRedis returns the Engine whose rules, activations and counters live in
// Redis through rdb, under keys starting with prefix, shared with every
// other sandbox using the same Redis and prefix. Each change of rules or
// activations waits settle once stored before it returns: replicas may
// decide with a version read up to settle before a request arrived (see
// WithRulesVersion), so after that wait every request any replica starts
// sees the change. cfg.NewID is ignored: ids come from one shared sequence.
func NewRedis(rdb redis.UniversalClient, prefix string, settle time.Duration, cfg Config) *RedisEngine {
	cfg = cfg.withDefaults()
	cfg.NewID = nil
	keys := prefix + redisKeysPart
	return &RedisEngine{
		perRequest:  newPerRequest(cfg.Library),
		cfg:         cfg,
		rdb:         rdb,
		settle:      settle,
		callTTL:     rediscall.CallTTL(rediscall.Options(rdb)),
		stallBudget: rediscall.StallBudget(rediscall.Options(rdb)),
		keys:        keys,
		verKey:      keys + "version",
		orderKey:    keys + "order",
		defsKey:     keys + "rules",
		actsKey:     keys + "activations",
		idSeqKey:    keys + "idseq",
	}
}

// Adopt activates each of acts (a replica's start-up scenarios) unless
// Redis lists it already, so a replica starting or restarting never resets
// counters the others rely on.
func (s *RedisEngine) Adopt(ctx context.Context, acts []Activation) error {
	for _, a := range acts {
		named, err := scenarioNamed(ctx, s.cfg.Library, a.Name)
		if err != nil {
			return fmt.Errorf("share scenario %q: %w", a.Name, err)
		}
		err = s.mutate(ctx, func(sc *MemoryEngine) error {
			if sc.hasActivation(a.Name, a.ClientID) {
				return nil
			}
			_, err := sc.activate(named, a.ClientID)
			return err
		}, nil)
		if err != nil {
			return fmt.Errorf("share scenario %q: %w", a.Name, err)
		}
	}
	return nil
}

// counterKey is the hash holding rule id's match and hit tallies.
func (s *RedisEngine) counterKey(id string) string { return s.keys + "counters:" + id }

// VersionKey is the Redis key whose integer value changes with every change
// of the shared rules and activations. The sandbox reads it with its other
// per-request state and passes the value to Decide through
// WithRulesVersion.
func (s *RedisEngine) VersionKey() string { return s.verKey }

// rulesVersionKey is the context key of WithRulesVersion.
type rulesVersionKey struct{}

// WithRulesVersion returns ctx telling a RedisEngine's Decide the shared
// rules' version, as read at most the settle given to NewRedis before the
// request arrived, so it need not read it again.
func WithRulesVersion(ctx context.Context, version int64) context.Context {
	return context.WithValue(ctx, rulesVersionKey{}, version)
}

// current returns the active rules and their index, from the cache when the
// version in Redis (as ctx carries it, see WithRulesVersion, or read now)
// still matches it.
func (s *RedisEngine) current(ctx context.Context) (*ruleIndex, error) {
	ver, known := ctx.Value(rulesVersionKey{}).(int64)
	if !known {
		var err error
		ver, err = s.rdb.Get(ctx, s.verKey).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("%w: read version: %w", ErrUnavailable, err)
		}
	}
	s.mu.Lock()
	if s.valid && s.ver == ver {
		index := s.index
		s.mu.Unlock()
		return index, nil
	}
	s.mu.Unlock()
	snap, err := s.load(ctx, s.rdb.TxPipelined)
	if err != nil {
		return nil, err
	}
	index := newRuleIndex(snap.entries)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ver, s.valid, s.index = snap.ver, true, index
	return index, nil
}

// Shared returns the RedisEngine with e's library, clock and cap, and e's
// activations (the start-up scenarios) adopted (see Adopt); e's other rules
// are not copied.
func (e *MemoryEngine) Shared(ctx context.Context, rdb redis.UniversalClient, prefix string, settle time.Duration) (*RedisEngine, error) {
	acts, err := e.Active(ctx)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	clientNow := e.clientNow
	e.mu.Unlock()
	shared := NewRedis(rdb, prefix, settle, Config{Library: e.lib, Clock: e.clock, ClientClock: clientNow, MaxRules: e.maxRules})
	if err := shared.Adopt(ctx, acts); err != nil {
		return nil, err
	}
	return shared, nil
}

// UseClientClock implements Engine.UseClientClock.
func (s *RedisEngine) UseClientClock(now func(clientID string) time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.ClientClock = now
}

// clientNow is the clock of timelines bound to a client.
func (s *RedisEngine) clientNow(clientID string) time.Time {
	s.mu.Lock()
	now := s.cfg.ClientClock
	s.mu.Unlock()
	return now(clientID)
}
