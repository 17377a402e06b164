package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// sharedClocks is the clockMover of replicas sharing Redis. Each move and
// the version bump are one MULTI/EXEC that also reads the clock back, so
// this replica applies the move at once and every other replica reads it
// before its next request (sharedState.sync). Offsets are integers of
// nanoseconds moved with INCRBY/HINCRBY, so concurrent advances through
// different replicas add up. A move returns only once no replica can still
// reuse a read from before it (sharedState.settle).
type sharedClocks struct {
	sh *sharedState
}

// move runs queue and the version bump in one transaction and applies the
// clock it reads back.
func (c sharedClocks) move(ctx context.Context, what string, queue func(p redis.Pipeliner)) error {
	var read clockRead
	_, err := c.sh.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		queue(p)
		p.Incr(ctx, c.sh.keys.clockVersion)
		read = c.sh.queueClockRead(ctx, p)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) { // a missing key reads as zero
		return sharedFailure(what, err)
	}
	st, err := read.state()
	if err != nil {
		return fmt.Errorf("%s: read the clock back: %w", what, err)
	}
	c.sh.clocks.Apply(st)
	c.sh.settle()
	return nil
}

func (c sharedClocks) advance(ctx context.Context, clientID string, d time.Duration) error {
	return c.move(ctx, "advance the clock", func(p redis.Pipeliner) {
		if clientID != "" {
			p.HIncrBy(ctx, c.sh.keys.clockClients, clientID, int64(d))
		} else {
			p.IncrBy(ctx, c.sh.keys.clockGlobal, int64(d))
		}
	})
}

// set computes the offset on this replica's clock, just brought in step
// (withShared): the sandbox-wide one from real time, a client's from the
// sandbox-wide time.
func (c sharedClocks) set(ctx context.Context, clientID string, at time.Time) error {
	global := c.sh.clocks.Global()
	return c.move(ctx, "set the clock", func(p redis.Pipeliner) {
		if clientID != "" {
			p.HSet(ctx, c.sh.keys.clockClients, clientID, int64(at.Sub(global.Now())))
		} else {
			real := global.Now().Add(-global.Offset())
			p.Set(ctx, c.sh.keys.clockGlobal, int64(at.Sub(real)), 0)
		}
	})
}

func (c sharedClocks) reset(ctx context.Context, clientID string) error {
	return c.move(ctx, "reset the clock", func(p redis.Pipeliner) {
		if clientID != "" {
			p.HDel(ctx, c.sh.keys.clockClients, clientID)
		} else {
			p.Del(ctx, c.sh.keys.clockGlobal)
		}
	})
}

func (c sharedClocks) resetAll(ctx context.Context) error {
	return c.move(ctx, "reset every clock", func(p redis.Pipeliner) {
		p.Del(ctx, c.sh.keys.clockGlobal, c.sh.keys.clockClients)
	})
}
