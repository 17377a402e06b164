package journal

import (
	"context"
	"encoding/json"
	"fmt"

	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RedisPrefix starts every key the shared journal keeps in Redis.
const RedisPrefix = "sandbox:journal:"

// readBatch is how many stream entries one read fetches while filtering.
const readBatch = 500

// RedisJournal is the journal that replicas share: a capped Redis stream
// with the same entry count and byte budget, truncation and paging as the
// in-memory Journal, so GET /__sandbox/requests and the conformance report
// through any replica see the calls made through all of them. Entry ids are
// the stream ids' first part, from one shared sequence.
//
// Its methods have the Journal's signatures, without errors: a failed Add
// is dropped and a failed read returns what it had (the request itself
// still answers; Redis being down is reported by the health check).
type RedisJournal struct {
	rdb        *redis.Client
	maxEntries int
	maxBytes   int64
	// Keys, all under RedisPrefix.
	streamKey, seqKey, bytesKey string
}

// NewRedis returns the shared journal over rdb with NewBounded's bounds.
func NewRedis(rdb *redis.Client, maxEntries int, maxBytes int64) *RedisJournal {
	return &RedisJournal{
		rdb: rdb, maxEntries: max(maxEntries, 1), maxBytes: max(maxBytes, MinMaxBytes),
		streamKey: RedisPrefix + "stream", seqKey: RedisPrefix + "seq", bytesKey: RedisPrefix + "bytes",
	}
}

// Add truncates e, then appends it atomically within the bounds (see
// addScript).
func (j *RedisJournal) Add(e Entry) {
	truncate(&e)
	size := e.Size()
	e.ID = 0 // the stream id carries it
	raw, err := json.Marshal(e)
	if err != nil {
		return // an Entry is plain data; cannot happen
	}
	_ = addScript.Run(context.Background(), j.rdb, []string{j.streamKey, j.seqKey, j.bytesKey},
		j.maxEntries, j.maxBytes, size, e.ClientID, raw).Err()
}

// Reachable returns nil when Redis answers a PING.
func (j *RedisJournal) Reachable() error {
	if err := j.rdb.Ping(context.Background()).Err(); err != nil {
		return fmt.Errorf("shared journal (Redis) unavailable: %w", err)
	}
	return nil
}

// Usage returns the stream's length and byte total.
func (j *RedisJournal) Usage() (int, int64) {
	ctx := context.Background()
	var n *redis.IntCmd
	var b *redis.StringCmd
	_, _ = j.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		n = p.XLen(ctx, j.streamKey)
		b = p.Get(ctx, j.bytesKey)
		return nil
	})
	bytes, _ := b.Int64() // absent before the first Add: 0
	if n.Val() == 0 {
		bytes = 0
	}
	return int(n.Val()), bytes
}

// Clear empties the stream; the sequence stays, so ids keep counting up.
func (j *RedisJournal) Clear() {
	ctx := context.Background()
	_, _ = j.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, j.streamKey)
		p.Set(ctx, j.bytesKey, 0, 0)
		return nil
	})
}

// ClearClient drops one client's entries (see clearClientScript).
func (j *RedisJournal) ClearClient(clientID string) {
	if clientID == "" {
		return
	}
	_ = clearClientScript.Run(context.Background(), j.rdb, []string{j.streamKey, j.bytesKey}, clientID).Err()
}

// Find returns the matching entries, oldest first; with a limit, the latest
// limit of them.
func (j *RedisJournal) Find(f Filter) []Entry {
	if f.Limit > 0 {
		return j.Latest(f, f.Limit)
	}
	out, _ := j.scan(f, -1)
	return out
}

// After returns the first limit entries matching f above f.AfterID and
// whether more follow.
func (j *RedisJournal) After(f Filter, limit int) ([]Entry, bool) {
	return j.scan(f, pageLimit(limit))
}

// scan reads forward from f.AfterID, keeping up to limit matching entries
// (all with limit < 0), and reports whether another match follows.
func (j *RedisJournal) scan(f Filter, limit int) ([]Entry, bool) {
	ctx := context.Background()
	start := "(" + strconv.FormatUint(f.AfterID, 10) + "-0"
	var out []Entry
	for {
		msgs, err := j.rdb.XRangeN(ctx, j.streamKey, start, "+", readBatch).Result()
		if err != nil {
			return out, false
		}
		for _, m := range msgs {
			e, ok := decode(m)
			if !ok || !f.matches(e) {
				continue
			}
			if limit >= 0 && len(out) == limit {
				return out, true
			}
			out = append(out, e)
		}
		if len(msgs) < readBatch {
			return out, false
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}

// Latest returns the newest limit entries matching f, oldest first.
func (j *RedisJournal) Latest(f Filter, limit int) []Entry {
	limit = pageLimit(limit)
	ctx := context.Background()
	end := "+"
	var out []Entry
	for len(out) < limit {
		msgs, err := j.rdb.XRevRangeN(ctx, j.streamKey, end, "-", readBatch).Result()
		if err != nil {
			break
		}
		for _, m := range msgs {
			if e, ok := decode(m); ok && f.matches(e) && len(out) < limit {
				out = append(out, e)
			}
		}
		if len(msgs) < readBatch {
			break
		}
		end = "(" + msgs[len(msgs)-1].ID
	}
	slices.Reverse(out)
	return out
}

// decode turns a stream message back into its Entry, numbered by its id.
func decode(m redis.XMessage) (Entry, bool) {
	raw, _ := m.Values["e"].(string)
	var e Entry
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		return Entry{}, false
	}
	seq, _, _ := strings.Cut(m.ID, "-")
	id, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return Entry{}, false
	}
	e.ID = id
	return e, true
}
