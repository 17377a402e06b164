package conformance

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// Program is what the report knows of one program of a client: the
// run label it set, the User-Agent it sent first, how many connections
// it used.
type Program struct {
	// Label names the program in the report: "run <label>", or its
	// User-Agent with a number when several programs send the same one.
	Label       string `json:"label"`
	Run         string `json:"run,omitempty"`
	UserAgent   string `json:"userAgent,omitempty"`
	Connections int    `json:"connections"`
}

// splitPrograms divides one client's calls (journal order) into programs.
// Two requests belong to the same program when
//   - they carry the same run label (X-Sandbox-Run or ?run=), or
//   - they came on the same TCP connection (one connection is one process), or
//   - one presents the token the other obtained (a program keeps its token);
//
// and never when they carry different run labels. Requests journaled
// without a connection (older journals) count as one connection. The
// User-Agent only names programs: a library's token requests and the
// program's own API calls often send different ones.
func splitPrograms(calls []call) [][]call {
	sets := newUnion(len(calls))
	byRun, byConn, byToken := map[string]int{}, map[string]int{}, map[string]int{}
	link := func(index map[string]int, key string, i int) {
		if j, ok := index[key]; ok {
			sets.join(j, i)
		} else {
			index[key] = i
		}
	}
	for i, c := range calls {
		sets.run[i] = c.Run
		if c.Run != "" {
			link(byRun, c.Run, i)
		}
	}
	for i, c := range calls {
		link(byConn, c.Connection, i)
		if c.issued() && c.TokenID != "" {
			link(byToken, c.TokenID, i)
		}
	}
	for i, c := range calls {
		if c.usesToken() && c.TokenID != "" {
			link(byToken, c.TokenID, i)
		}
	}
	var order []int
	groups := map[int][]int{}
	for i := range calls {
		root := sets.find(i)
		if _, ok := groups[root]; !ok {
			order = append(order, root)
		}
		groups[root] = append(groups[root], i)
	}
	order = joinSuccessors(calls, order, groups)
	out := make([][]call, 0, len(order))
	for _, root := range order {
		idx := groups[root]
		sort.Ints(idx)
		part := make([]call, len(idx))
		for k, i := range idx {
			part[k] = calls[i]
		}
		out = append(out, part)
	}
	return out
}

// joinSuccessors joins a group to an earlier one that ended before it
// began and whose requests sent the same User-Agents, when neither has a
// run label: a program that lost its connection and fetched a new token on
// the next one shares nothing else with its past. Groups that overlap in
// time are different programs. Of the groups that fit, the one that first
// appeared latest is chosen; a joined group ends with its successor, so a
// second program that started while the first successor ran is not joined.
// It returns the roots that remain, in order, in time near-linear in the
// number of calls (each signature is computed once, each fitting group
// found in a tree of its signature's groups).
func joinSuccessors(calls []call, order []int, groups map[int][]int) []int {
	signature := func(root int) string {
		uas := map[string]bool{}
		for _, i := range groups[root] {
			if calls[i].Run != "" {
				return "" // labelled: never joined by guesswork
			}
			uas[calls[i].Headers["User-Agent"]] = true
		}
		list := make([]string, 0, len(uas))
		for ua := range uas {
			list = append(list, ua)
		}
		sort.Strings(list)
		return strings.Join(list, "\n")
	}
	sigs := make([]string, len(order))
	count := map[string]int{}
	for k, root := range order {
		sigs[k] = signature(root)
		count[sigs[k]]++
	}
	// Per signature, the groups kept so far in order, each with the end of
	// its last call.
	type kin struct {
		roots []int
		ends  *latestBefore
	}
	bySig := map[string]*kin{}
	last := map[int]int{} // a kept group's last call
	var kept []int
	for k, root := range order {
		idx := groups[root]
		first, end := calls[idx[0]], calls[idx[len(idx)-1]]
		sig := sigs[k]
		if sig == "" {
			kept = append(kept, root)
			continue
		}
		g := bySig[sig]
		if g == nil {
			g = &kin{ends: newLatestBefore(count[sig])}
			bySig[sig] = g
		}
		if best := g.ends.find(first); first.timed && best >= 0 {
			prev := g.roots[best]
			groups[prev] = append(groups[prev], idx...)
			if l := idx[len(idx)-1]; l > last[prev] {
				last[prev] = l
				g.ends.set(best, calls[l])
			}
			continue
		}
		kept = append(kept, root)
		last[root] = idx[len(idx)-1]
		g.ends.set(len(g.roots), end)
		g.roots = append(g.roots, root)
	}
	return kept
}

// latestBefore holds the end of each of n groups' last calls and finds the
// latest group whose last call ended before a call started, in O(log n):
// a segment tree of the earliest end under each node.
type latestBefore struct {
	n    int
	ends []int64 // the earliest end under each node; math.MaxInt64 when none
}

func newLatestBefore(n int) *latestBefore {
	t := &latestBefore{n: max(n, 1)}
	t.ends = make([]int64, 4*t.n)
	for i := range t.ends {
		t.ends[i] = math.MaxInt64
	}
	return t
}

// set records where slot i's last call ended; an untimed call never fits.
func (t *latestBefore) set(i int, c call) {
	end := int64(math.MaxInt64)
	if c.timed {
		end = c.end.UnixNano()
	}
	node, lo, hi := 1, 0, t.n
	var path []int
	for hi-lo > 1 {
		path = append(path, node)
		mid := (lo + hi) / 2
		if i < mid {
			node, hi = 2*node, mid
		} else {
			node, lo = 2*node+1, mid
		}
	}
	t.ends[node] = end
	for k := len(path) - 1; k >= 0; k-- {
		p := path[k]
		t.ends[p] = min(t.ends[2*p], t.ends[2*p+1])
	}
}

// find returns the latest slot whose call ended before c started, or -1.
func (t *latestBefore) find(c call) int {
	if !c.timed || t.ends[1] >= c.start.UnixNano() {
		return -1
	}
	before := c.start.UnixNano()
	node, lo, hi := 1, 0, t.n
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if t.ends[2*node+1] < before {
			node, lo = 2*node+1, mid
		} else {
			node, hi = 2*node, mid
		}
	}
	return lo
}

// describePrograms labels each program of one client.
func describePrograms(programs [][]call) []Program {
	out := make([]Program, len(programs))
	seen := map[string]int{}
	for i, calls := range programs {
		p := Program{}
		conns := map[string]bool{}
		for _, c := range calls {
			conns[c.Connection] = true
			if p.Run == "" {
				p.Run = c.Run
			}
			if ua := c.Headers["User-Agent"]; p.UserAgent == "" && ua != "" && c.usesToken() {
				p.UserAgent = ua
			}
		}
		if p.UserAgent == "" {
			for _, c := range calls {
				if ua := c.Headers["User-Agent"]; ua != "" {
					p.UserAgent = ua
					break
				}
			}
		}
		p.Connections = len(conns)
		switch {
		case p.Run != "":
			p.Label = "run " + p.Run
		case p.UserAgent != "":
			p.Label = p.UserAgent
		default:
			p.Label = "no User-Agent"
		}
		seen[p.Label]++
		if n := seen[p.Label]; n > 1 {
			p.Label += " #" + strconv.Itoa(n)
		}
		out[i] = p
	}
	return out
}

// union is a union-find over request indexes that refuses to join two
// sets labelled with different runs.
type union struct {
	parent []int
	run    []string // the run label of each root, "" when none
}

func newUnion(n int) *union {
	u := &union{parent: make([]int, n), run: make([]string, n)}
	for i := range u.parent {
		u.parent[i] = i
	}
	return u
}

func (u *union) find(i int) int {
	for u.parent[i] != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = u.parent[i]
	}
	return i
}

func (u *union) join(a, b int) {
	ra, rb := u.find(a), u.find(b)
	if ra == rb || (u.run[ra] != "" && u.run[rb] != "" && u.run[ra] != u.run[rb]) {
		return
	}
	if u.run[ra] == "" {
		u.run[ra] = u.run[rb]
	}
	u.parent[rb] = ra
}
