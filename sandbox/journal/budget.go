package journal

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// Per-entry and whole-journal byte bounds. Without them a caller sending
// 64 KB headers made every entry 64 KB and 10,000 entries half a gigabyte.
const (
	// DefaultMaxBytes is the journal's default byte budget (64 MiB).
	DefaultMaxBytes int64 = 64 << 20
	// MinMaxBytes is the smallest budget a journal accepts (1 MiB): it holds
	// two entries of the largest size truncate leaves (MaxEntryBytes).
	MinMaxBytes int64 = 1 << 20
	// MaxValueBytes is the longest path, query, header value or other
	// string an entry keeps; longer ones are cut and end in TruncatedMark.
	MaxValueBytes = 1024
	// MaxHeaderNameBytes is the longest header name kept; headers with
	// longer names are dropped, since cutting a name could merge two.
	MaxHeaderNameBytes = 128
	// MaxHeaders is how many headers an entry keeps (the first ones by
	// name); the rest are dropped.
	MaxHeaders = 64
	// entryOverhead approximates the memory of an entry beyond its strings:
	// the struct, the map's buckets, the ring slot.
	entryOverhead = 256
	// headerOverhead approximates a map entry's memory beyond its strings.
	headerOverhead = 32
)

// TruncatedMark ends every value truncate cut.
const TruncatedMark = "…"

// Size is what the entry counts against the journal's byte budget: the
// length of its strings as JSON writes them plus a fixed overhead per entry
// and per header. It bounds the entry's JSON in GET /__sandbox/requests
// (which is built in memory) and approximates its memory: counting raw
// bytes instead would let a caller whose headers are full of '<' (six bytes
// each in JSON) make a page six times the budget.
func (e *Entry) Size() int64 {
	n := entryOverhead
	for _, s := range []string{e.At, e.Method, e.Path, e.Query, e.Endpoint, e.ClientID, e.TokenID,
		e.TokenExpiresAt, e.Fault, e.RuleID, e.Scenario, e.RequestID} {
		n += jsonLen(s)
	}
	for name, value := range e.Headers {
		n += headerOverhead + jsonLen(name) + jsonLen(value)
	}
	for _, t := range e.Truncated {
		n += jsonLen(t)
	}
	n += e.Upstream.size()
	return int64(n)
}

// truncate cuts every value of e to the per-entry bounds and lists what it
// cut in e.Truncated, so that one entry costs at most MaxEntryBytes
// whatever was sent or the real service answered (see fitEntry). It never adds to a value, so a redacted value stays redacted.
// A value kept whole is copied: net/http hands out the method and path as
// slices of the whole request line, so a stored "GET" would otherwise keep
// a 60 KB request line alive, outside the byte budget.
func truncate(e *Entry) {
	var cut []string
	// Names and fields in two arrays: in one array of pairs, escape
	// analysis lets the names appended to cut carry the fields' pointers,
	// and every entry passed to Add moves to the heap.
	names := [...]string{
		"method", "path", "query", "endpoint",
		"clientId", "namedClientId", "tokenId", "tokenExpiresAt",
		"fault", "ruleId", "scenario", "requestId",
	}
	fields := [len(names)]*string{
		&e.Method, &e.Path, &e.Query, &e.Endpoint,
		&e.ClientID, &e.NamedClientID, &e.TokenID, &e.TokenExpiresAt,
		&e.Fault, &e.RuleID, &e.Scenario, &e.RequestID,
	}
	total := 0
	for i, v := range fields {
		shortened, ok := cutValue(*v)
		*v = shortened
		total += len(shortened)
		if ok {
			cut = append(cut, names[i])
		}
	}
	// One copy holds every field (one allocation per entry, not one per
	// field); the fields are slices of it and live and die with the entry.
	var b strings.Builder
	b.Grow(total)
	for _, v := range fields {
		b.WriteString(*v)
	}
	all := b.String()
	for _, v := range fields {
		n := len(*v)
		*v, all = all[:n], all[n:]
	}
	if headers, cutHeaders := truncateHeaders(e.Headers); cutHeaders != nil {
		e.Headers = headers
		cut = append(cut, cutHeaders...)
	}
	if u, cutUpstream := truncateUpstream(e.Upstream); cutUpstream != nil {
		e.Upstream = u
		cut = append(cut, cutUpstream...)
	}
	e.Truncated = append(e.Truncated, cut...)
	fitEntry(e)
}

// truncateHeaders returns the headers within the bounds and what was cut,
// or h itself and nil when nothing needed cutting.
func truncateHeaders(h map[string]string) (map[string]string, []string) {
	needed := len(h) > MaxHeaders
	for name, value := range h {
		if len(name) > MaxHeaderNameBytes || len(value) > MaxValueBytes {
			needed = true
			break
		}
	}
	if !needed {
		return h, nil
	}
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make(map[string]string, min(len(h), MaxHeaders))
	var cut []string
	dropped := false
	for _, name := range names {
		if len(name) > MaxHeaderNameBytes || len(out) == MaxHeaders {
			dropped = true
			continue
		}
		value, shortened := cutValue(h[name])
		if shortened {
			cut = append(cut, "headers."+name)
		}
		out[name] = value
	}
	if dropped {
		cut = append(cut, "headers")
	}
	return out, cut
}

// cutValue shortens s to at most MaxValueBytes, on a UTF-8 boundary, ending
// in TruncatedMark; ok is false when s was short enough.
func cutValue(s string) (string, bool) {
	if len(s) <= MaxValueBytes {
		return s, false
	}
	end := MaxValueBytes - len(TruncatedMark)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + TruncatedMark, true
}
