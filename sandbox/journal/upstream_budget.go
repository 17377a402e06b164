package journal

import "fmt"

// Bounds of an entry's upstream part and of the whole entry. Without them
// one upstream answer with 2,000,000 invalid items made a 228 MB entry,
// larger than the whole journal budget, which then held that entry alone.
const (
	// MaxDivergences is how many divergences an entry keeps; one more
	// line says how many were left out ("and N more").
	MaxDivergences = 20
	// MaxEntryBytes bounds an entry's Size whatever was sent or answered:
	// half of MinMaxBytes, so that every journal holds at least two of
	// the largest entries and no entry evicts a whole journal.
	MaxEntryBytes = MinMaxBytes / 2
)

// MoreDivergences is the line that ends a list of divergences cut to
// MaxDivergences: more is how many were left out, atLeast says that the
// count is a lower bound (the answer was not checked to its end).
func MoreDivergences(more int, atLeast bool) string {
	switch {
	case atLeast && more == 0:
		return "and perhaps more divergences (the rest of the answer was not checked)"
	case atLeast:
		return fmt.Sprintf("and at least %d more divergences (the first %d are listed; the rest of the answer was not checked)", more, MaxDivergences)
	}
	return fmt.Sprintf("and %d more divergences (the first %d are listed)", more, MaxDivergences)
}

// CutValue shortens s to MaxValueBytes as truncate does, for a caller that
// bounds a string before it reaches the journal (a log line).
func CutValue(s string) string {
	cut, _ := cutValue(s)
	return cut
}

// truncateUpstream cuts u to the per-entry bounds: its URL, error and
// headers like the request's, its divergences to MaxDivergences and the
// line saying how many more, its bodies to MaxUpstreamBody. It returns a
// copy when anything was cut, with what was cut named "upstream.<field>",
// and never changes u, which the request's handler still holds.
func truncateUpstream(u *Upstream) (*Upstream, []string) {
	if u == nil {
		return nil, nil
	}
	out := *u
	var cut []string
	for _, f := range []struct {
		name string
		v    *string
	}{{"upstream.url", &out.URL}, {"upstream.bodyOmitted", &out.BodyOmitted}, {"upstream.error", &out.Error}} {
		if v, ok := cutValue(*f.v); ok {
			*f.v = v
			cut = append(cut, f.name)
		}
	}
	if headers, cutHeaders := truncateHeaders(out.Headers); cutHeaders != nil {
		out.Headers = headers
		for _, c := range cutHeaders {
			cut = append(cut, "upstream."+c)
		}
	}
	if len(out.RequestBody) > MaxUpstreamBody {
		out.RequestBody = nil
		cut = append(cut, "upstream.requestBody")
	}
	if len(out.Body) > MaxUpstreamBody {
		out.Body, out.BodyOmitted = nil, fmt.Sprintf("over %d bytes", MaxUpstreamBody)
		cut = append(cut, "upstream.body")
	}
	if d, cutDivergences := truncateDivergences(out.Divergences); cutDivergences {
		out.Divergences = d
		cut = append(cut, "upstream.divergences")
	}
	if cut == nil {
		return u, nil
	}
	return &out, cut
}

// truncateDivergences keeps MaxDivergences divergences and the line after
// them, each cut to MaxValueBytes; a longer list ends in MoreDivergences.
func truncateDivergences(d []string) ([]string, bool) {
	needed := len(d) > MaxDivergences+1
	for _, s := range d {
		needed = needed || len(s) > MaxValueBytes
	}
	if !needed {
		return d, false
	}
	kept := min(len(d), MaxDivergences+1)
	if len(d) > MaxDivergences+1 {
		kept = MaxDivergences
	}
	out := make([]string, 0, MaxDivergences+1)
	for _, s := range d[:kept] {
		out = append(out, CutValue(s))
	}
	if kept < len(d) {
		out = append(out, MoreDivergences(len(d)-kept, false))
	}
	return out, true
}

// fitEntry drops what is largest and least needed until e's Size is within
// MaxEntryBytes: the values each within its bound can still add up (64
// headers of 1 KB of '<', six bytes each in JSON, twice over). The order
// keeps what says what happened (status, path, error, the first
// divergences) longest.
func fitEntry(e *Entry) {
	if e.Size() <= MaxEntryBytes {
		return
	}
	u := e.Upstream
	if u != nil {
		cp := *u
		u = &cp
		e.Upstream = u
	}
	steps := []struct {
		name string
		drop func() bool
	}{
		{"upstream.body", func() bool {
			if u == nil || u.Body == nil {
				return false
			}
			u.Body, u.BodyOmitted = nil, "the entry was over its size bound"
			return true
		}},
		{"upstream.requestBody", func() bool {
			if u == nil || u.RequestBody == nil {
				return false
			}
			u.RequestBody = nil
			return true
		}},
		{"upstream.headers", func() bool {
			if u == nil || len(u.Headers) == 0 {
				return false
			}
			u.Headers = map[string]string{}
			return true
		}},
		{"upstream.divergences", func() bool {
			if u == nil || len(u.Divergences) <= 1 {
				return false
			}
			u.Divergences = []string{u.Divergences[0], MoreDivergences(len(u.Divergences)-1, false)}
			return true
		}},
		{"headers", func() bool {
			if len(e.Headers) == 0 {
				return false
			}
			e.Headers = map[string]string{}
			return true
		}},
	}
	for _, s := range steps {
		if e.Size() <= MaxEntryBytes {
			return
		}
		if s.drop() {
			e.Truncated = append(e.Truncated, s.name)
		}
	}
}
