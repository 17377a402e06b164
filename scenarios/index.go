package scenarios

import (
	"slices"
	"strings"
)

// ruleIndex finds the rules whose path pattern matches a request's path
// without trying every rule: the patterns are a tree of path segments (a
// literal segment, or "*" for any one non-empty segment), and a request
// walks it one segment at a time. The walk stops as soon as no pattern
// agrees with the path so far, so a long request path costs no more than
// the longest pattern that agrees with its start: what the request sends
// cannot make the walk longer than the rules allow, and nothing of it runs
// under an engine's lock (an index is never changed once built; a change
// of rules builds a new one).
//
// It answers the same as trying Rule.Matches on every rule in order.
type ruleIndex struct {
	// anyPath holds the rules without a path, which every path matches.
	anyPath []indexed
	root    *pathNode
}

// indexed is a rule and its place in evaluation order.
type indexed struct {
	order int
	en    *entry
}

// pathNode is one segment of the patterns: the patterns through it go on
// with a literal segment (literal) or any segment (wild), or end here.
type pathNode struct {
	literal map[string]*pathNode
	wild    *pathNode
	ends    []indexed
}

// newRuleIndex indexes entries, in their order. Its cost is that of the
// patterns, which admin calls add and which the caller sending requests
// does not choose.
func newRuleIndex(entries []*entry) *ruleIndex {
	ix := &ruleIndex{root: &pathNode{}}
	for i, en := range entries {
		it := indexed{order: i, en: en}
		if en.rule.Path == "" {
			ix.anyPath = append(ix.anyPath, it)
			continue
		}
		n := ix.root
		pattern := en.rule.Path
		for {
			seg, rest, more := strings.Cut(pattern, "/")
			n = n.child(seg)
			if !more {
				break
			}
			pattern = rest
		}
		n.ends = append(n.ends, it)
	}
	return ix
}

// child returns (making it) the node after segment seg of a pattern.
func (n *pathNode) child(seg string) *pathNode {
	if seg == "*" {
		if n.wild == nil {
			n.wild = &pathNode{}
		}
		return n.wild
	}
	if n.literal == nil {
		n.literal = make(map[string]*pathNode)
	}
	c := n.literal[seg]
	if c == nil {
		c = &pathNode{}
		n.literal[seg] = c
	}
	return c
}

// candidates returns the rules that match req, in evaluation order. A rule
// still has to fire (see entry.fire) to decide the request.
func (ix *ruleIndex) candidates(req Request) []*entry {
	var found []indexed
	for _, it := range ix.anyPath {
		if it.en.rule.matchesBesidesPath(req) {
			found = append(found, it)
		}
	}
	for _, it := range ix.pathMatches(req.Path) {
		if it.en.rule.matchesBesidesPath(req) {
			found = append(found, it)
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b indexed) int { return a.order - b.order })
	out := make([]*entry, len(found))
	for i, it := range found {
		out[i] = it.en
	}
	return out
}

// pathMatches walks path through the tree: the nodes reached after each
// segment are those whose patterns agree with the path so far. Equal to
// pathMatches(pattern, path) for every pattern: segment by segment, equal or
// "*" for a non-empty one, with the same number of segments.
func (ix *ruleIndex) pathMatches(path string) []indexed {
	if ix.root.literal == nil && ix.root.wild == nil {
		return nil
	}
	active := []*pathNode{ix.root}
	var next []*pathNode
	for {
		seg, rest, more := strings.Cut(path, "/")
		next = next[:0]
		for _, n := range active {
			if c := n.literal[seg]; c != nil {
				next = append(next, c)
			}
			if n.wild != nil && seg != "" {
				next = append(next, n.wild)
			}
		}
		if len(next) == 0 {
			return nil
		}
		active, next = next, active
		if !more {
			break
		}
		path = rest
	}
	var out []indexed
	for _, n := range active {
		out = append(out, n.ends...)
	}
	return out
}
