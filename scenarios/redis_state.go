package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
)

// snapshot is the shared rule list and activations as read at one version.
type snapshot struct {
	ver     int64
	entries []*entry
	acts    []Activation
}

// pipelineFunc runs queued commands: a MULTI for a consistent read, or a
// plain pipeline inside WATCH (where EXEC would drop the watch).
type pipelineFunc func(context.Context, func(redis.Pipeliner) error) ([]redis.Cmder, error)

// load reads the version, the rule order, the definitions and the
// activations together. Every command's own error is checked: a pipeline
// reports only its first, and an absent version (redis.Nil) must not hide
// a failed read behind it.
func (s *RedisEngine) load(ctx context.Context, run pipelineFunc) (snapshot, error) {
	var ver *redis.StringCmd
	var order, acts *redis.StringSliceCmd
	var defs *redis.MapStringStringCmd
	_, err := run(ctx, func(p redis.Pipeliner) error {
		ver = p.Get(ctx, s.verKey)
		order = p.LRange(ctx, s.orderKey, 0, -1)
		defs = p.HGetAll(ctx, s.defsKey)
		acts = p.LRange(ctx, s.actsKey, 0, -1)
		return nil
	})
	if err == nil || errors.Is(err, redis.Nil) {
		err = errors.Join(ignoreNil(ver.Err()), order.Err(), defs.Err(), acts.Err())
	}
	if err != nil {
		return snapshot{}, fmt.Errorf("%w: read rules: %w", ErrUnavailable, err)
	}
	var snap snapshot
	if v, err := ver.Int64(); err == nil {
		snap.ver = v
	}
	byID := defs.Val()
	for _, id := range order.Val() {
		var sr storedRule
		if err := json.Unmarshal([]byte(byID[id]), &sr); err != nil {
			return snapshot{}, fmt.Errorf("%w: rule %q is stored malformed: %w", ErrUnavailable, id, err)
		}
		en := newEntry(sr.Rule, sr.Binding, sr.AddedAt)
		en.startedAt = sr.StartedAt
		snap.entries = append(snap.entries, en)
	}
	for _, raw := range acts.Val() {
		var a Activation
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			return snapshot{}, fmt.Errorf("%w: activation is stored malformed: %w", ErrUnavailable, err)
		}
		snap.acts = append(snap.acts, a)
	}
	return snap, nil
}

// ignoreNil drops redis.Nil, the answer for an absent key.
func ignoreNil(err error) error {
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

// withCounters fills the entries' tallies from Redis, for status reports.
func (s *RedisEngine) withCounters(ctx context.Context, entries []*entry) error {
	cmds := make([]*redis.MapStringStringCmd, len(entries))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, en := range entries {
			cmds[i] = p.HGetAll(ctx, s.counterKey(en.rule.ID))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: read counters: %w", ErrUnavailable, err)
	}
	for i, en := range entries {
		for field, raw := range cmds[i].Val() {
			n, _ := strconv.ParseInt(raw, 10, 64) // written only by fireScript
			switch {
			case field == "m":
				en.matches = int(n)
			case field == "h":
				en.hits, en.counts.hits = int(n), int(n)
			case field == "last":
				en.lastFired = time.Unix(0, n)
			case strings.HasPrefix(field, "h:"):
				if en.clients == nil {
					en.clients = make(map[string]*counter)
				}
				en.clients[field[2:]] = &counter{hits: int(n)}
			}
		}
	}
	return nil
}

// mutate applies change to the shared rules as one optimistic transaction:
// it loads the state under WATCH of the version, runs change on a
// MemoryEngine holding that state (so the shared engine enforces exactly
// the same rules, caps and ids as the in-memory one), and writes the
// difference back, bumping the version; a concurrent change (another admin
// call, a rule retiring) makes it retry. extra, when set, queues more writes
// in the same transaction. An error from change is returned as it is; any
// Redis failure, including one drawing a rule id, wraps ErrUnavailable. It
// returns nil only once Redis has taken the change.
func (s *RedisEngine) mutate(ctx context.Context, change func(scratch *MemoryEngine) error, extra func(redis.Pipeliner, *MemoryEngine)) error {
	for range 100 {
		var changeErr, idErr error
		err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			snap, err := s.load(ctx, tx.Pipelined)
			if err != nil {
				return err
			}
			s.mu.Lock()
			cfg := s.cfg
			s.mu.Unlock()
			cfg.NewID = s.newID(ctx, tx, &idErr)
			scratch := New(cfg)
			// Clones: the engine's deletes zero the slice tails, and write
			// compares against the state as loaded.
			scratch.entries, scratch.activations = slices.Clone(snap.entries), slices.Clone(snap.acts)
			changeErr = change(scratch)
			if idErr != nil {
				return idErr
			}
			if changeErr != nil {
				return changeErr
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				s.write(ctx, p, snap, scratch)
				if extra != nil {
					extra(p, scratch)
				}
				return nil
			})
			return err
		}, s.verKey)
		switch {
		case errors.Is(err, redis.TxFailedErr):
			continue
		case idErr != nil:
			return fmt.Errorf("%w: draw a rule id: %w", ErrUnavailable, rediscall.MarkUnconfirmed(idErr))
		case changeErr != nil:
			return changeErr
		case errors.Is(err, ErrUnavailable):
			return err
		case err != nil:
			return fmt.Errorf("%w: %w", ErrUnavailable, rediscall.MarkUnconfirmed(err))
		}
		// Replicas reuse a read of the version for up to settle (see
		// NewRedis): once this wait is over, every request that any replica
		// starts sees the change.
		time.Sleep(s.settle)
		return nil
	}
	return fmt.Errorf("%w: the rules kept changing; try again", ErrUnavailable)
}

// newID numbers rules from one shared sequence, so replicas never hand out
// the same id. A failed INCR is kept in *failed (and the id is empty), for
// mutate to report as the Redis failure it is. It draws on rdb, the
// connection mutate holds for its WATCH: drawing on another from the pool
// while every connection is held by a WATCH would wait for ever (a
// cluster node's pool is half a single client's, so a dozen concurrent
// rule changes did).
func (s *RedisEngine) newID(ctx context.Context, rdb redis.Cmdable, failed *error) func() string {
	return func() string {
		if *failed != nil {
			return ""
		}
		n, err := rdb.Incr(ctx, s.idSeqKey).Result()
		if err != nil {
			*failed = err
			return ""
		}
		return "rule-" + strconv.FormatInt(n, 10)
	}
}

// write queues the difference between before and after.
func (s *RedisEngine) write(ctx context.Context, p redis.Pipeliner, before snapshot, after *MemoryEngine) {
	kept := make(map[*entry]bool, len(after.entries))
	for _, en := range after.entries {
		kept[en] = true
	}
	for _, en := range before.entries {
		if !kept[en] {
			p.HDel(ctx, s.defsKey, en.rule.ID)
			p.Del(ctx, s.counterKey(en.rule.ID))
		}
	}
	old := make(map[*entry]bool, len(before.entries))
	for _, en := range before.entries {
		old[en] = true
	}
	p.Del(ctx, s.orderKey)
	ids := make([]any, 0, len(after.entries))
	for _, en := range after.entries {
		ids = append(ids, en.rule.ID)
		if !old[en] {
			raw, _ := json.Marshal(storedRule{Rule: en.rule, Binding: en.binding, AddedAt: en.addedAt, StartedAt: en.startedAt}) // plain data
			p.Del(ctx, s.counterKey(en.rule.ID))
			p.HSet(ctx, s.defsKey, en.rule.ID, raw)
		}
	}
	if len(ids) > 0 {
		p.RPush(ctx, s.orderKey, ids...)
	}
	p.Del(ctx, s.actsKey)
	acts := make([]any, 0, len(after.activations))
	for _, a := range after.activations {
		raw, _ := json.Marshal(a) // plain data
		acts = append(acts, raw)
	}
	if len(acts) > 0 {
		p.RPush(ctx, s.actsKey, acts...)
	}
	p.Incr(ctx, s.verKey)
}
