package scenarios

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// The RedisEngine's admin methods. Each change runs the MemoryEngine's
// method on the state read from Redis (see mutate), so both implementations
// answer alike; each read returns ErrUnavailable rather than an empty or
// partial answer when Redis fails.

// Add implements Engine.Add.
func (s *RedisEngine) Add(ctx context.Context, r Rule) (RuleStatus, error) {
	r = cloneRule(r)
	r.Scenario = ""
	if err := r.Validate(); err != nil {
		return RuleStatus{}, err // invalid whatever Redis holds: no round trip
	}
	var added RuleStatus
	err := s.mutate(ctx, func(sc *MemoryEngine) error {
		var err error
		added, err = sc.Add(ctx, r)
		return err
	}, nil)
	return added, err
}

// Activate implements Engine.Activate.
func (s *RedisEngine) Activate(ctx context.Context, name, clientID string) ([]Rule, error) {
	named, err := scenarioNamed(ctx, s.cfg.Library, name)
	if err != nil {
		return nil, err
	}
	var added []Rule
	err = s.mutate(ctx, func(sc *MemoryEngine) error {
		var err error
		added, err = sc.activate(named, clientID)
		return err
	}, nil)
	return added, err
}

// Remove implements Engine.Remove.
func (s *RedisEngine) Remove(ctx context.Context, id string) error {
	return s.mutate(ctx, func(sc *MemoryEngine) error { return sc.Remove(ctx, id) }, nil)
}

// Deactivate implements Engine.Deactivate.
func (s *RedisEngine) Deactivate(ctx context.Context, name, clientID string) error {
	return s.mutate(ctx, func(sc *MemoryEngine) error { return sc.Deactivate(ctx, name, clientID) }, nil)
}

// Clear implements Engine.Clear.
func (s *RedisEngine) Clear(ctx context.Context) error {
	return s.mutate(ctx, func(sc *MemoryEngine) error { return sc.Clear(ctx) }, nil)
}

// ClearClient implements Engine.ClearClient; it also drops the client's
// tallies in the per-client rules that stay, in the same transaction.
func (s *RedisEngine) ClearClient(ctx context.Context, clientID string) error {
	if clientID == "" {
		return nil
	}
	return s.mutate(ctx, func(sc *MemoryEngine) error { return sc.ClearClient(ctx, clientID) },
		func(p redis.Pipeliner, sc *MemoryEngine) {
			for _, en := range sc.entries {
				if en.rule.PerClient {
					p.HDel(ctx, s.counterKey(en.rule.ID), "m:"+clientID, "h:"+clientID)
				}
			}
		})
}

// Rules implements Engine.Rules.
func (s *RedisEngine) Rules(ctx context.Context) ([]RuleStatus, error) {
	snap, err := s.load(ctx, s.rdb.TxPipelined)
	if err != nil {
		return nil, err
	}
	if err := s.withCounters(ctx, snap.entries); err != nil {
		return nil, err
	}
	out := make([]RuleStatus, 0, len(snap.entries))
	for _, en := range snap.entries {
		// An ended timeline has retired; it leaves Redis with the next
		// change of the rules (see MemoryEngine.retireEnded).
		if !en.ended(s.clientNow) {
			out = append(out, en.statusAt(s.clientNow))
		}
	}
	return out, nil
}

// Get implements Engine.Get.
func (s *RedisEngine) Get(ctx context.Context, id string) (RuleStatus, error) {
	snap, err := s.load(ctx, s.rdb.TxPipelined)
	if err != nil {
		return RuleStatus{}, err
	}
	for _, en := range snap.entries {
		if en.rule.ID == id && !en.ended(s.clientNow) {
			if err := s.withCounters(ctx, []*entry{en}); err != nil {
				return RuleStatus{}, err
			}
			return en.statusAt(s.clientNow), nil
		}
	}
	return RuleStatus{}, fmt.Errorf("rule %q: %w", id, ErrNotFound)
}

// Active implements Engine.Active.
func (s *RedisEngine) Active(ctx context.Context) ([]Activation, error) {
	snap, err := s.load(ctx, s.rdb.TxPipelined)
	if err != nil {
		return nil, err
	}
	// A rule whose times ran out has already left Redis; an ended
	// timeline stays until the next change, so it is judged here.
	return markEnded(snap.acts, liveIn(snap.entries, s.clientNow)), nil
}
