package scenarios

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// The shared forms of the Engine's admin methods. Each runs the in-memory
// method on the state read from Redis (see mutate), so both implementations
// answer alike. Methods without an error result report a Redis failure as
// "nothing": Decide, which every request runs, answers 503 instead.

func (s *sharedRules) add(e *Engine, r Rule) (Rule, error) {
	var added Rule
	err := s.mutate(e, func(sc *Engine) error {
		var err error
		added, err = sc.Add(r)
		return err
	}, nil)
	return added, err
}

func (s *sharedRules) activate(e *Engine, name, clientID string) ([]Rule, error) {
	var added []Rule
	err := s.mutate(e, func(sc *Engine) error {
		var err error
		added, err = sc.Activate(name, clientID)
		return err
	}, nil)
	return added, err
}

func (s *sharedRules) remove(e *Engine, id string) bool {
	found := false
	err := s.mutate(e, func(sc *Engine) error {
		found = sc.Remove(id)
		return nil
	}, nil)
	return err == nil && found
}

func (s *sharedRules) deactivate(e *Engine, name, clientID string) bool {
	found := false
	err := s.mutate(e, func(sc *Engine) error {
		found = sc.Deactivate(name, clientID)
		return nil
	}, nil)
	return err == nil && found
}

func (s *sharedRules) clear(e *Engine) {
	_ = s.mutate(e, func(sc *Engine) error { sc.Clear(); return nil }, nil)
}

// clearClient also drops the client's tallies in the per-client rules that
// stay, in the same transaction.
func (s *sharedRules) clearClient(e *Engine, clientID string) {
	_ = s.mutate(e, func(sc *Engine) error { sc.ClearClient(clientID); return nil },
		func(p redis.Pipeliner, sc *Engine) {
			for _, en := range sc.entries {
				if en.rule.PerClient {
					p.HDel(context.Background(), s.counterKey(en.rule.ID), "m:"+clientID, "h:"+clientID)
				}
			}
		})
}

// statuses lists the rules with their counters.
func (s *sharedRules) statuses() []RuleStatus {
	ctx := context.Background()
	snap, err := s.load(ctx, s.rdb.TxPipelined)
	if err != nil || s.withCounters(ctx, snap.entries) != nil {
		return nil
	}
	out := make([]RuleStatus, len(snap.entries))
	for i, en := range snap.entries {
		out[i] = en.status()
	}
	return out
}

// get is one rule with its counters.
func (s *sharedRules) get(id string) (RuleStatus, bool) {
	for _, st := range s.statuses() {
		if st.ID == id {
			return st, true
		}
	}
	return RuleStatus{}, false
}

// active lists the activations.
func (s *sharedRules) active() []Activation {
	snap, err := s.load(context.Background(), s.rdb.TxPipelined)
	if err != nil {
		return nil
	}
	return snap.acts
}
