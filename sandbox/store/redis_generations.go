package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redisslot"
)

// staleBuild is how long a generation may be under construction before
// OpenRedis takes it for the leftover of a Reset that died. A Reset writes
// its generation in one script per client, so a live one takes seconds at
// most; the margin keeps a replica starting up from deleting another's
// Reset in flight.
const staleBuild = 10 * time.Minute

// maxFlipRounds bounds the rounds of one flip: each round flips the
// clients that joined the flip's set during the previous one.
const maxFlipRounds = 100

// flip makes generation gen, built, current. Each client script reads its
// client's own generation key, so the flip moves every client in its own
// script; the global generation moves last:
//
//  1. startFlipScript records, in the global slot, that gen is being
//     flipped and which clients to flip: those of the current generation
//     and of gen. A client that registers meanwhile joins them.
//  2. rollForward moves each of them to gen (flipClientScript), then makes
//     gen current once no client is left (finishFlipScript).
//
// gen's data was complete before step 1, so any replica may finish a flip
// another began (OpenRedis and every Reset roll one forward), and every
// request sees its client's old or new records, never a mix. During the
// flip two clients may be on different generations.
func (s *RedisStore) flip(ctx context.Context, gen string) error {
	for range maxFlipRounds {
		res, err := s.run(ctx, startFlipScript, gen)
		if err != nil {
			// The script may have run: the generation is left to the next
			// open, which rolls its flip forward or deletes it.
			return err
		}
		reply, err := replyStrings(res)
		if err != nil || len(reply) == 0 {
			return fmt.Errorf("redis: malformed flip reply (%v)", err)
		}
		switch reply[0] {
		case "busy":
			// Another Reset's flip is in progress, or died: finish it first.
			if err := s.rollForward(ctx); err != nil {
				return err
			}
			continue
		case "superseded":
			// A later Reset's generation is current already: this one
			// took effect and was replaced at once.
			_ = s.dropGeneration(ctx, gen)
			return nil
		case "dropped":
			return fmt.Errorf("generation %s was deleted as a dead Reset's while it was being built (older than %s)", gen, staleBuild)
		}
		return s.rollForward(ctx)
	}
	return fmt.Errorf("flip generation %s: other Resets kept flipping", gen)
}

// rollForward completes the flip in progress, if any: it moves every
// client of the flip's set to the new generation, then makes that
// generation current and deletes the one it replaced.
func (s *RedisStore) rollForward(ctx context.Context) error {
	flipped := map[string]bool{}
	for range maxFlipRounds {
		res, err := s.run(ctx, flipStateScript)
		if err != nil {
			return fmt.Errorf("read the flip in progress: %w", err)
		}
		state, err := replyStrings(res)
		if err != nil {
			return err
		}
		if len(state) == 0 {
			return nil
		}
		gen := state[0]
		for i := 1; i+1 < len(state); i += 2 {
			client := state[i]
			if flipped[client] {
				continue
			}
			if _, err := s.runClient(ctx, client, flipClientScript, gen, state[i+1]); err != nil {
				return fmt.Errorf("flip client %q to generation %s: %w", client, gen, err)
			}
			flipped[client] = true
		}
		res, err = s.run(ctx, finishFlipScript, gen, len(flipped))
		if err != nil {
			return fmt.Errorf("finish the flip to generation %s: %w", gen, err)
		}
		reply, err := replyStrings(res)
		if err != nil || len(reply) == 0 {
			return fmt.Errorf("redis: malformed flip reply (%v)", err)
		}
		switch reply[0] {
		case "more":
			continue
		case "ok":
			// The reset has happened; a failure to delete the old
			// generation leaves garbage that the next open removes, not a
			// wrong answer.
			if len(reply) == 2 {
				_ = s.deleteGeneration(ctx, reply[1])
			}
		}
		return nil // "gone": another replica finished it
	}
	return fmt.Errorf("flip: clients kept joining for %d rounds", maxFlipRounds)
}

// scanGenerations calls fn with every key of a generation, on every node,
// with the generation the key belongs to and the node that holds it. fn
// may be called from several goroutines at once.
func (s *RedisStore) scanGenerations(ctx context.Context, fn func(ctx context.Context, node redis.Cmdable, key, gen string) error) error {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	return redisslot.ForEachNode(ctx, s.client, func(ctx context.Context, node redis.Cmdable) error {
		iter := node.Scan(ctx, 0, s.prefix+"{*}g*", 1000).Iterator()
		for iter.Next(ctx) {
			if gen, ok := s.generationOf(iter.Val()); ok {
				if err := fn(ctx, node, iter.Val(), gen); err != nil {
					return err
				}
			}
		}
		return iter.Err()
	})
}

// deleteGeneration deletes every key of generation gen, on every node, a
// batch at a time, without blocking Redis for long. Keys of different
// slots are unlinked one command each, pipelined.
func (s *RedisStore) deleteGeneration(ctx context.Context, gen string) error {
	type batch struct {
		node redis.Cmdable
		keys []string
	}
	var mu sync.Mutex
	batches := map[redis.Cmdable]*batch{}
	flush := func(ctx context.Context, b *batch) error {
		if len(b.keys) == 0 {
			return nil
		}
		pipe := b.node.Pipeline()
		for _, k := range b.keys {
			pipe.Unlink(ctx, k)
		}
		b.keys = b.keys[:0]
		_, err := pipe.Exec(ctx)
		return err
	}
	err := s.scanGenerations(ctx, func(ctx context.Context, node redis.Cmdable, key, g string) error {
		if g != gen {
			return nil
		}
		mu.Lock()
		b := batches[node]
		if b == nil {
			b = &batch{node: node}
			batches[node] = b
		}
		mu.Unlock()
		// Each node's keys are appended by that node's goroutine only.
		if b.keys = append(b.keys, key); len(b.keys) == 1000 {
			return flush(ctx, b)
		}
		return nil
	})
	if err == nil {
		ctx, cancel := s.opContext(ctx)
		defer cancel()
		for _, b := range batches {
			if err = flush(ctx, b); err != nil {
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("delete generation %s: %w", gen, unreachable(err))
	}
	return nil
}

// dropGeneration abandons a generation being built: it no longer counts
// as in progress, and its keys go.
func (s *RedisStore) dropGeneration(ctx context.Context, gen string) error {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	if err := s.client.ZRem(ctx, s.global+"building", gen).Err(); err != nil {
		return fmt.Errorf("drop generation %s: %w", gen, unreachable(err))
	}
	return s.deleteGeneration(ctx, gen)
}

// readGenerations answers the current generation, Redis's time and the
// generations being built with their start times.
func (s *RedisStore) readGenerations(ctx context.Context) (current string, now int64, building [][2]string, err error) {
	res, err := s.run(ctx, generationsScript)
	if err != nil {
		return "", 0, nil, err
	}
	reply, err := replyStrings(res)
	if err != nil || len(reply) < 2 {
		return "", 0, nil, fmt.Errorf("read generations: malformed reply (%v)", err)
	}
	if now, err = strconv.ParseInt(reply[1], 10, 64); err != nil {
		return "", 0, nil, fmt.Errorf("read generations: redis time %q: %w", reply[1], err)
	}
	for i := 2; i+1 < len(reply); i += 2 {
		building = append(building, [2]string{reply[i], reply[i+1]})
	}
	return reply[0], now, building, nil
}

// deleteStaleGenerations deletes every generation but the current one and
// those another replica is building (for less than staleBuild): what a
// Reset that died between its steps left behind. It scans every node, so
// it runs at open only, after rollForward (a generation being flipped is
// still among those being built).
func (s *RedisStore) deleteStaleGenerations(ctx context.Context) error {
	current, now, building, err := s.readGenerations(ctx)
	if err != nil {
		return err
	}
	keep := map[string]bool{current: true}
	for _, b := range building {
		started, err := strconv.ParseInt(b[1], 10, 64)
		if err == nil && now-started < int64(staleBuild/time.Second) {
			keep[b[0]] = true
		} else if err := s.dropGeneration(ctx, b[0]); err != nil {
			return err
		}
	}
	var mu sync.Mutex
	found := map[string]bool{}
	err = s.scanGenerations(ctx, func(_ context.Context, _ redis.Cmdable, _, gen string) error {
		if !keep[gen] {
			mu.Lock()
			found[gen] = true
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("scan generations: %w", unreachable(err))
	}
	// A Reset may have begun or flipped since the first read. Its
	// generation was registered as building before it had a key, so a
	// second read sees it, current or building, and spares it.
	current, _, building, err = s.readGenerations(ctx)
	if err != nil {
		return err
	}
	keep[current] = true
	for _, b := range building {
		keep[b[0]] = true
	}
	for gen := range found {
		if keep[gen] {
			continue
		}
		if err := s.deleteGeneration(ctx, gen); err != nil {
			return err
		}
	}
	return nil
}

// generationOf parses the generation of a record key: the digits of
// P{g}gN:... or of P{c:<client>}gN:... (a client tag holds no ":" or "}",
// and its generation follows the last "}g" before the first ':').
func (s *RedisStore) generationOf(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, s.prefix)
	if !ok {
		return "", false
	}
	var head string
	switch {
	case strings.HasPrefix(rest, "{g}g"):
		head, _, ok = strings.Cut(strings.TrimPrefix(rest, "{g}g"), ":")
	case strings.HasPrefix(rest, "{c:"):
		head, _, ok = strings.Cut(strings.TrimPrefix(rest, "{c:"), ":")
		if i := strings.LastIndex(head, "}g"); ok && i >= 0 {
			head = head[i+2:]
		} else {
			ok = false
		}
	default:
		return "", false
	}
	if !ok || head == "" || strings.Trim(head, "0123456789") != "" {
		return "", false
	}
	return head, true
}

// refuseLegacyLayout refuses to open a Redis holding records in the
// layout of earlier releases (every client under PgN:, or {P}gN: on a
// cluster): their records would be invisible, as if lost. Such a sandbox
// is kept on the earlier release, or its keys are deleted.
func (s *RedisStore) refuseLegacyLayout(ctx context.Context) error {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	var legacy []string
	for _, p := range []string{s.prefix, "{" + s.prefix + "}"} {
		legacy = append(legacy, p+"gen", p+"g0:clients", p+"g0:rc")
	}
	for _, key := range legacy {
		n, err := s.client.Exists(ctx, key).Result()
		if err != nil {
			return fmt.Errorf("look for records of an earlier release: %w", unreachable(err))
		}
		if n > 0 {
			return fmt.Errorf("%w: %s holds records in the key layout of an earlier release, which this one does not read; delete the keys under the prefix (or keep the earlier release) to start", ErrInvalid, key)
		}
	}
	return nil
}
