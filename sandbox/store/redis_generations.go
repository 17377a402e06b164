package store

import (
	"fmt"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redisslot"
	"strconv"
	"strings"
	"time"
)

// staleBuild is how long a generation may be under construction before
// OpenRedis takes it for the leftover of a Reset that died. A Reset writes
// its generation in one script, so a live one takes seconds at most; the
// margin keeps a replica starting up from deleting another's Reset in
// flight.
const staleBuild = 10 * time.Minute

// generationKeys is the SCAN pattern of every key of generation gen.
func (s *RedisStore) generationKeys(gen string) string {
	return s.prefix + "g" + gen + ":*"
}

// deleteGeneration deletes every key of generation gen, a batch at a time,
// without blocking Redis for long.
func (s *RedisStore) deleteGeneration(gen string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	scan, err := redisslot.ScanClient(ctx, s.client, s.genKey)
	if err != nil {
		return fmt.Errorf("delete generation %s: %w", gen, unreachable(err))
	}
	iter := scan.Scan(ctx, 0, s.generationKeys(gen), 1000).Iterator()
	batch := make([]string, 0, 1000)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := s.client.Unlink(ctx, batch...).Err()
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return fmt.Errorf("delete generation %s: %w", gen, unreachable(err))
			}
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("scan generation %s: %w", gen, unreachable(err))
	}
	if err := flush(); err != nil {
		return fmt.Errorf("delete generation %s: %w", gen, unreachable(err))
	}
	return nil
}

// dropGeneration abandons a generation being built: it no longer counts
// as in progress, and its keys go.
func (s *RedisStore) dropGeneration(gen string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.client.ZRem(ctx, s.prefix+"building", gen).Err(); err != nil {
		return fmt.Errorf("drop generation %s: %w", gen, unreachable(err))
	}
	return s.deleteGeneration(gen)
}

// deleteStaleGenerations deletes every generation but the current one and
// those another replica is building (for less than staleBuild): what a
// Reset that died between its steps left behind. It scans the prefix's
// keys, so it runs at open only.
func (s *RedisStore) deleteStaleGenerations() error {
	res, err := s.run(generationsScript)
	if err != nil {
		return err
	}
	reply, err := replyStrings(res)
	if err != nil || len(reply) < 2 {
		return fmt.Errorf("read generations: malformed reply (%v)", err)
	}
	current := reply[0]
	now, err := strconv.ParseInt(reply[1], 10, 64)
	if err != nil {
		return fmt.Errorf("read generations: redis time %q: %w", reply[1], err)
	}
	keep := map[string]bool{current: true}
	for i := 2; i+1 < len(reply); i += 2 {
		started, err := strconv.ParseInt(reply[i+1], 10, 64)
		if err == nil && now-started < int64(staleBuild/time.Second) {
			keep[reply[i]] = true
		} else if err := s.dropGeneration(reply[i]); err != nil {
			return err
		}
	}
	ctx, cancel := s.ctx()
	defer cancel()
	found := map[string]bool{}
	scan, err := redisslot.ScanClient(ctx, s.client, s.genKey)
	if err != nil {
		return fmt.Errorf("list generations: %w", unreachable(err))
	}
	iter := scan.Scan(ctx, 0, s.prefix+"g*", 1000).Iterator()
	for iter.Next(ctx) {
		if gen, ok := s.generationOf(iter.Val()); ok && !keep[gen] {
			found[gen] = true
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("scan generations: %w", unreachable(err))
	}
	// A Reset may have begun or flipped since the first read. Its
	// generation was registered as building before it had a key, so a
	// second read sees it, current or building, and spares it.
	if res, err = s.run(generationsScript); err != nil {
		return err
	}
	if reply, err = replyStrings(res); err != nil || len(reply) < 2 {
		return fmt.Errorf("read generations: malformed reply (%v)", err)
	}
	keep[reply[0]] = true
	for i := 2; i < len(reply); i += 2 {
		keep[reply[i]] = true
	}
	for gen := range found {
		if keep[gen] {
			continue
		}
		if err := s.deleteGeneration(gen); err != nil {
			return err
		}
	}
	return nil
}

// generationOf parses the generation of a record key: the digits between
// the prefix's "g" and the next ':'.
func (s *RedisStore) generationOf(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, s.prefix+"g")
	if !ok {
		return "", false
	}
	gen, _, ok := strings.Cut(rest, ":")
	if !ok || gen == "" || strings.Trim(gen, "0123456789") != "" {
		return "", false
	}
	return gen, true
}
