package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
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
// A failed read or clear returns an error wrapping ErrUnavailable, never a
// short page; an entry the background writer could not store is reported
// by the next Flush (and so by the next read through this replica).
//
// Add queues the entry for a background writer that appends many entries
// per script call (writer); reads wait for the queue, so a replica reads
// its own entries at once and the others' once their writers have run.
type RedisJournal struct {
	rdb        redis.UniversalClient
	maxEntries int
	maxBytes   int64
	// Keys, all under the prefix given to NewRedis.
	streamKey, seqKey, bytesKey, indexKey, clientsKey string
	// legacySizesKey is the list of entry sizes that the index replaced;
	// the index's first build deletes it.
	legacySizesKey string
	writer         *writer
}

// NewRedis returns the shared journal over rdb, its keys starting with
// prefix, with NewBounded's bounds.
func NewRedis(rdb redis.UniversalClient, prefix string, maxEntries int, maxBytes int64) *RedisJournal {
	keys := prefix + redisKeysPart
	j := &RedisJournal{
		rdb: rdb, maxEntries: max(maxEntries, 1), maxBytes: max(maxBytes, MinMaxBytes),
		streamKey: keys + "stream", seqKey: keys + "seq", bytesKey: keys + "bytes", indexKey: keys + "index", legacySizesKey: keys + "sizes",
		clientsKey: keys + "clients",
	}
	j.writer = newWriter(j.append)
	return j
}

// Add truncates e, then appends it atomically within the bounds (see
// addScript) in the background.
func (j *RedisJournal) Add(_ context.Context, e Entry) error {
	truncate(&e)
	size := e.Size()
	e.ID = 0 // the stream id carries it
	raw, err := appendEntryJSON(make([]byte, 0, size), &e)
	if err != nil {
		return fmt.Errorf("encode journal entry: %w", err) // plain data; cannot happen
	}
	j.writer.add(pendingEntry{size: size, clientID: e.ClientID, json: raw})
	return nil
}

// append stores a batch of entries with one addScript call.
func (j *RedisJournal) append(entries []pendingEntry) error {
	if len(entries) == 0 {
		return nil // the script needs at least one: it keeps the newest
	}
	args := make([]any, 0, 2+3*len(entries))
	args = append(args, j.maxEntries, j.maxBytes)
	for _, e := range entries {
		args = append(args, e.size, e.clientID, e.json)
	}
	err := addScript.Run(context.Background(), j.rdb, j.scriptKeys(), args...).Err()
	if err != nil {
		return fmt.Errorf("append %d journal entries: %w", len(entries), err)
	}
	return nil
}

// scriptKeys are the KEYS every journal script takes (see
// redis_scripts.go).
func (j *RedisJournal) scriptKeys() []string {
	return []string{j.streamKey, j.seqKey, j.bytesKey, j.indexKey, j.clientsKey, j.legacySizesKey}
}

// Flush returns once every entry added before the call is stored, or
// dropped because Redis failed: then it returns that failure.
func (j *RedisJournal) Flush(ctx context.Context) error {
	if err := j.writer.flush(ctx); err != nil {
		return fmt.Errorf("%w: store journal entries: %w", ErrUnavailable, rediscall.MarkUnconfirmed(err))
	}
	return nil
}

// unavailable wraps a failed Redis call, marking one that may have been
// applied (rediscall.MarkUnconfirmed).
func unavailable(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, rediscall.MarkUnconfirmed(err))
}

// Usage returns the stream's length and byte total.
func (j *RedisJournal) Usage(ctx context.Context) (int, int64, error) {
	if err := j.Flush(ctx); err != nil {
		return 0, 0, err
	}
	var n *redis.IntCmd
	var b *redis.StringCmd
	_, err := j.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		n = p.XLen(ctx, j.streamKey)
		b = p.Get(ctx, j.bytesKey)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, 0, unavailable("read the journal's usage", err)
	}
	if err := n.Err(); err != nil {
		return 0, 0, unavailable("read the journal's length", err)
	}
	bytes, err := b.Int64()
	if err != nil && !errors.Is(err, redis.Nil) { // absent before the first Add: 0
		return 0, 0, unavailable("read the journal's size", err)
	}
	if n.Val() == 0 {
		bytes = 0
	}
	return int(n.Val()), bytes, nil
}

// Clear empties the stream; the sequence stays, so ids keep counting up.
func (j *RedisJournal) Clear(ctx context.Context) error {
	if err := j.Flush(ctx); err != nil {
		return err
	}
	if err := clearScript.Run(ctx, j.rdb, j.scriptKeys()).Err(); err != nil {
		return unavailable("clear the journal", err)
	}
	return nil
}

// ClearClient drops one client's entries (see clearClientScript).
func (j *RedisJournal) ClearClient(ctx context.Context, clientID string) error {
	if err := j.Flush(ctx); err != nil {
		return err
	}
	if clientID == "" {
		return nil
	}
	if err := clearClientScript.Run(ctx, j.rdb, j.scriptKeys(), clientID).Err(); err != nil {
		return unavailable("clear a client's journal", err)
	}
	return nil
}

// Find returns the matching entries, oldest first; with a limit, the latest
// limit of them.
func (j *RedisJournal) Find(ctx context.Context, f Filter) ([]Entry, error) {
	if f.Limit > 0 {
		return j.latest(ctx, f, pageLimit(f.Limit), -1)
	}
	out, _, err := j.scan(ctx, f, -1)
	return out, err
}

// After returns the first limit entries matching f above f.AfterID, within
// MaxPageBytes, and whether more follow.
func (j *RedisJournal) After(ctx context.Context, f Filter, limit int) ([]Entry, bool, error) {
	return j.scan(ctx, f, pageLimit(limit))
}

// scan reads forward from f.AfterID, keeping up to limit matching entries
// within MaxPageBytes (all, unbounded, with limit < 0), and reports
// whether another match follows. A read
// that fails part way is an error, never a short page.
func (j *RedisJournal) scan(ctx context.Context, f Filter, limit int) ([]Entry, bool, error) {
	if err := j.Flush(ctx); err != nil {
		return nil, false, err
	}
	start := "(" + strconv.FormatUint(f.AfterID, 10) + "-0"
	var out []Entry
	var bytes int64
	for {
		msgs, err := j.rdb.XRangeN(ctx, j.streamKey, start, "+", readBatch).Result()
		if err != nil {
			return nil, false, unavailable("read the journal", err)
		}
		for _, m := range msgs {
			e, err := decode(m)
			if err != nil {
				return nil, false, err
			}
			if !f.matches(e) {
				continue
			}
			if limit >= 0 {
				size := e.Size()
				if !fitsPage(len(out), bytes, size, limit, MaxPageBytes) {
					return out, true, nil
				}
				bytes += size
			}
			out = append(out, e)
		}
		if len(msgs) < readBatch {
			return out, false, nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}

// Latest returns the newest limit entries matching f, oldest first, within
// MaxPageBytes.
func (j *RedisJournal) Latest(ctx context.Context, f Filter, limit int) ([]Entry, error) {
	return j.latest(ctx, f, pageLimit(limit), MaxPageBytes)
}

// latest returns the newest limit entries matching f, oldest first, within
// maxBytes (see fitsPage).
func (j *RedisJournal) latest(ctx context.Context, f Filter, limit int, maxBytes int64) ([]Entry, error) {
	if err := j.Flush(ctx); err != nil {
		return nil, err
	}
	end := "+"
	var out []Entry
	var bytes int64
	full := false
	for !full {
		msgs, err := j.rdb.XRevRangeN(ctx, j.streamKey, end, "-", readBatch).Result()
		if err != nil {
			return nil, unavailable("read the journal", err)
		}
		for _, m := range msgs {
			e, err := decode(m)
			if err != nil {
				return nil, err
			}
			if !f.matches(e) {
				continue
			}
			size := e.Size()
			if !fitsPage(len(out), bytes, size, limit, maxBytes) {
				full = true
				break
			}
			out = append(out, e)
			bytes += size
		}
		if full || len(msgs) < readBatch {
			break
		}
		end = "(" + msgs[len(msgs)-1].ID
	}
	slices.Reverse(out)
	return out, nil
}

// decode turns a stream message back into its Entry, numbered by its id.
// A message that does not decode is an error, never skipped: a journal
// read with entries quietly missing would make the report judge a client
// on part of what it did.
func decode(m redis.XMessage) (Entry, error) {
	raw, _ := m.Values["e"].(string)
	var e Entry
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		return Entry{}, fmt.Errorf("%w: entry %s: %w", ErrCorrupt, m.ID, err)
	}
	seq, _, _ := strings.Cut(m.ID, "-")
	id, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return Entry{}, fmt.Errorf("%w: entry id %s: %w", ErrCorrupt, m.ID, err)
	}
	e.ID = id
	return e, nil
}
