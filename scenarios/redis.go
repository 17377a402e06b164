package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisKeysPart follows the sandbox's --redis-prefix in every key the
// shared engine keeps in Redis.
const redisKeysPart = "scenarios:"

// sharedRules keeps an Engine's rules, activations and counters in Redis so
// that replicas behind one load balancer share them exactly. Rule
// definitions and activations change only through admin calls, which run as
// optimistic transactions on the version key (see mutate); counting runs in
// fireScript. Each replica caches the rule list keyed by the version. The
// sandbox reads the version with the rest of its per-request state and
// hands it to Decide (WithRulesVersion), so a request never sees a stale
// list and, with no rule matching, costs the rules no round trip at all.
type sharedRules struct {
	rdb *redis.Client
	// Keys, all under the prefix given to Shared.
	keys                                         string
	verKey, orderKey, defsKey, actsKey, idSeqKey string
	// settle is how long a change waits, once stored, before it returns.
	settle time.Duration

	mu    sync.Mutex
	ver   int64
	valid bool
	list  []*entry // read-only once cached; counters live in Redis
}

// storedRule is a rule definition as kept in the defs hash.
type storedRule struct {
	Rule    Rule      `json:"rule"`
	Binding string    `json:"binding,omitempty"`
	AddedAt time.Time `json:"addedAt"`
}

// Shared returns an Engine over the same library, clock and cap as e whose
// rules, activations and counters live in Redis through rdb, under keys
// starting with prefix, shared with every other sandbox using the same
// Redis and prefix. Each change of rules or activations waits settle once
// stored before it returns: replicas may decide with a version read up to
// settle before a request arrived (see WithRulesVersion), so after that wait
// every request any replica starts sees the change. e's scenario activations (the
// start-up ones) are carried over unless Redis already lists them, so a
// replica starting or restarting never resets counters the others rely on;
// e's other rules are not copied.
func (e *Engine) Shared(rdb *redis.Client, prefix string, settle time.Duration) (*Engine, error) {
	keys := prefix + redisKeysPart
	s := &sharedRules{
		rdb:      rdb,
		settle:   settle,
		keys:     keys,
		verKey:   keys + "version",
		orderKey: keys + "order",
		defsKey:  keys + "rules",
		actsKey:  keys + "activations",
		idSeqKey: keys + "idseq",
	}
	out := New(Config{Library: e.lib, Clock: e.clock, MaxRules: e.maxRules})
	out.shared = s
	for _, a := range e.Active() {
		err := s.mutate(out, func(sc *Engine) error {
			if sc.hasActivation(a.Name, a.ClientID) {
				return nil
			}
			_, err := sc.Activate(a.Name, a.ClientID)
			return err
		}, nil)
		if err != nil {
			return nil, fmt.Errorf("share scenario %q: %w", a.Name, err)
		}
	}
	return out, nil
}

// counterKey is the hash holding rule id's match and hit tallies.
func (s *sharedRules) counterKey(id string) string { return s.keys + "counters:" + id }

// SharedVersionKey is the Redis key whose integer value changes with every
// change of the shared rules and activations, "" for an in-memory engine.
// The sandbox reads it with its other per-request state and passes the
// value to Decide through WithRulesVersion.
func (e *Engine) SharedVersionKey() string {
	if e.shared == nil {
		return ""
	}
	return e.shared.verKey
}

// rulesVersionKey is the context key of WithRulesVersion.
type rulesVersionKey struct{}

// WithRulesVersion returns ctx telling Decide the shared rules' version, as
// read at most the settle given to Shared before the request arrived, so it
// need not read it again.
func WithRulesVersion(ctx context.Context, version int64) context.Context {
	return context.WithValue(ctx, rulesVersionKey{}, version)
}

// ErrUnavailable wraps every Redis failure of the shared engine: the
// caller should answer 503 and let the client retry.
var ErrUnavailable = errors.New("shared scenario state (Redis) unavailable")

// unavailableDecision is what a request gets when the rules cannot be read:
// a 503 with Retry-After, since answering normally would silently skip a
// failure the caller asked for.
func unavailableDecision() Decision {
	return Decision{Status: 503, Reason: "shared state unavailable", RetryAfter: DefaultRetryAfter}
}

// current returns the active rules, from the cache when the version in
// Redis (as ctx carries it, see WithRulesVersion, or read now) still
// matches it.
func (s *sharedRules) current(ctx context.Context) ([]*entry, error) {
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
		list := s.list
		s.mu.Unlock()
		return list, nil
	}
	s.mu.Unlock()
	snap, err := s.load(ctx, s.rdb.TxPipelined)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ver, s.valid, s.list = snap.ver, true, snap.entries
	return snap.entries, nil
}

// decide is Engine.Decide on the shared state.
func (s *sharedRules) decide(ctx context.Context, e *Engine, req Request) (Decision, bool) {
	list, err := s.current(ctx)
	if err != nil {
		return unavailableDecision(), true
	}
	for _, en := range list {
		if !en.rule.Matches(req) {
			continue
		}
		r := en.rule
		perClient := "0"
		if r.PerClient {
			perClient = "1"
		}
		res, err := fireScript.Run(ctx, s.rdb,
			[]string{s.defsKey, s.orderKey, s.verKey, s.counterKey(r.ID)},
			r.ID, req.ClientID, r.After, r.Times, perClient,
			strconv.FormatFloat(r.Probability, 'g', -1, 64), strconv.FormatUint(r.Seed, 10),
			e.clock.Now().UnixNano()).Int64Slice()
		if err != nil || len(res) != 2 {
			return unavailableDecision(), true
		}
		if res[0] != 1 {
			continue // did not fire, or removed since the list was read
		}
		return r.decide(matchRNG(r.Seed, res[1])), true
	}
	return Decision{}, false
}

// Reachable returns nil when the engine's state can be read: always for the
// in-memory engine; in shared mode, when Redis answers a PING. Admin calls
// whose methods report no error check it first, so they answer 503 instead
// of an empty list or a false "not found" while Redis is down.
func (e *Engine) Reachable() error {
	if e.shared == nil {
		return nil
	}
	if err := e.shared.rdb.Ping(context.Background()).Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}
