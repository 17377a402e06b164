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

// redisKeysPart follows the sandbox's --redis-prefix in every key the
// shared journal keeps in Redis.
const redisKeysPart = "journal:"

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
//
// Add queues the entry for a background writer that appends many entries
// per script call (writer); reads wait for the queue, so a replica reads
// its own entries at once and the others' once their writers have run.
type RedisJournal struct {
	rdb        *redis.Client
	maxEntries int
	maxBytes   int64
	// Keys, all under the prefix given to NewRedis.
	streamKey, seqKey, bytesKey, sizesKey string
	writer                                *writer
}

// NewRedis returns the shared journal over rdb, its keys starting with
// prefix, with NewBounded's bounds.
func NewRedis(rdb *redis.Client, prefix string, maxEntries int, maxBytes int64) *RedisJournal {
	keys := prefix + redisKeysPart
	j := &RedisJournal{
		rdb: rdb, maxEntries: max(maxEntries, 1), maxBytes: max(maxBytes, MinMaxBytes),
		streamKey: keys + "stream", seqKey: keys + "seq", bytesKey: keys + "bytes", sizesKey: keys + "sizes",
	}
	j.writer = newWriter(j.append)
	return j
}

// Add truncates e, then appends it atomically within the bounds (see
// addScript) in the background.
func (j *RedisJournal) Add(e Entry) {
	truncate(&e)
	size := e.Size()
	e.ID = 0 // the stream id carries it
	raw, err := json.Marshal(e)
	if err != nil {
		return // an Entry is plain data; cannot happen
	}
	j.writer.add(pendingEntry{size: size, clientID: e.ClientID, json: raw})
}

// append stores a batch of entries with one addScript call.
func (j *RedisJournal) append(entries []pendingEntry) error {
	args := make([]any, 0, 2+3*len(entries))
	args = append(args, j.maxEntries, j.maxBytes)
	for _, e := range entries {
		args = append(args, e.size, e.clientID, e.json)
	}
	err := addScript.Run(context.Background(), j.rdb, []string{j.streamKey, j.seqKey, j.bytesKey, j.sizesKey}, args...).Err()
	if err != nil {
		return fmt.Errorf("append %d journal entries: %w", len(entries), err)
	}
	return nil
}

// Flush returns once every entry added before the call is stored, or
// dropped because Redis failed.
func (j *RedisJournal) Flush() { j.writer.flush() }

// Reachable returns nil when Redis answers a PING.
func (j *RedisJournal) Reachable() error {
	if err := j.rdb.Ping(context.Background()).Err(); err != nil {
		return fmt.Errorf("shared journal (Redis) unavailable: %w", err)
	}
	return nil
}

// Usage returns the stream's length and byte total.
func (j *RedisJournal) Usage() (int, int64) {
	j.Flush()
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
	j.Flush()
	ctx := context.Background()
	_, _ = j.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, j.streamKey)
		p.Set(ctx, j.bytesKey, 0, 0)
		p.Del(ctx, j.sizesKey)
		return nil
	})
}

// ClearClient drops one client's entries (see clearClientScript).
func (j *RedisJournal) ClearClient(clientID string) {
	j.Flush()
	if clientID == "" {
		return
	}
	_ = clearClientScript.Run(context.Background(), j.rdb, []string{j.streamKey, j.bytesKey, j.sizesKey}, clientID).Err()
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
	j.Flush()
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
	j.Flush()
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
