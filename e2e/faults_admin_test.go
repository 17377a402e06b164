package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// adminChecker changes admin state through one replica and checks every
// later request through every replica sees it:
//
//   - a rule added (201) is listed by every replica afterwards and forces
//     the next request on its path through each, and once deleted (2xx)
//     is neither listed nor applied by any: no 2xx for a change that did
//     not happen;
//   - a client created (201) gets a token from every replica, which every
//     replica accepts; once deleted (2xx) every replica refuses it a token
//     and refuses the token it had. A creation or deletion of unknown
//     outcome (503, no answer) may have happened or not, but every
//     replica must agree which (issue 24: a 503 delete had happened on one
//     replica and not on another), and its retry settles it;
//   - the sandbox clock, advanced by one second at a time, never reads
//     behind the acknowledged advances nor ahead of all those attempted.
type adminChecker struct {
	h *faultHarness

	mu             sync.Mutex
	ackedAdvance   time.Duration // sum of advances answered 2xx
	triedAdvance   time.Duration // sum of advances sent
	rulesChanged   int
	clientsChanged int
	clocksMoved    int
	adminUnknown   int
}

// run loops until stop.
func (c *adminChecker) run(stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(7, 24))
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		c.ruleRoundTrip(n, rng)
		c.clientRoundTrip(n, rng)
		c.clockStep(rng)
	}
}

func (c *adminChecker) call(r *faultReplica, method, path string, body any) (answer, bool) {
	var data []byte
	ct := ""
	if body != nil {
		data, _ = json.Marshal(body)
		ct = jsonType
	}
	a, err := do(c.h.t.Context(), c.h.c, method, r.base()+path, "", ct, data, nil)
	if err != nil {
		c.h.transportErrs.Add(1)
		return a, false
	}
	if a.status == http.StatusServiceUnavailable {
		c.h.check503(a, method+" "+path)
		return a, false
	}
	return a, true
}

// ruleRoundTrip adds a rule that matches nothing the workload sends,
// checks every replica lists it, deletes it and checks none does.
func (c *adminChecker) ruleRoundTrip(n int, rng *rand.Rand) {
	h := c.h
	r := h.replica(rng.IntN(len(h.replicas)))
	a, ok := c.call(r, http.MethodPost, "/__sandbox/scenarios", map[string]any{
		"endpoint": "api", "path": fmt.Sprintf("/api/v1/referrals/faults-%d", n), "status": http.StatusUnauthorized,
	})
	if !ok {
		c.unknown()
		return
	}
	if a.status != http.StatusCreated {
		h.anomaly("add a rule through %s: %d %s%s", r.base(), a.status, truncate(a.body), h.logged(a))
		return
	}
	var added struct{ ID string }
	if err := json.Unmarshal(a.body, &added); err != nil || added.ID == "" {
		h.anomaly("add a rule: 201 without an id: %s", truncate(a.body))
		return
	}
	path := fmt.Sprintf("/api/v1/referrals/faults-%d", n)
	c.expectListed(added.ID, path, true)
	d := h.replica(rng.IntN(len(h.replicas)))
	a, ok = c.call(d, http.MethodDelete, "/__sandbox/scenarios/"+added.ID, map[string]any{})
	if !ok {
		c.unknown()
		return
	}
	if a.status/100 != 2 {
		h.anomaly("delete rule %s through %s: %d %s%s", added.ID, d.base(), a.status, truncate(a.body), h.logged(a))
		return
	}
	c.expectListed(added.ID, path, false)
	c.mu.Lock()
	c.rulesChanged += 2
	c.mu.Unlock()
}

// expectListed checks every replica's rule list holds id (or not), and
// that a request on its path through each is forced by it (or not).
func (c *adminChecker) expectListed(id, path string, want bool) {
	h := c.h
	change := map[bool]string{true: "added", false: "deleted"}[want]
	for _, r := range h.replicas {
		if a, ok := c.call(r, http.MethodGet, "/__sandbox/scenarios", nil); ok {
			if got := strings.Contains(string(a.body), `"`+id+`"`); a.status != http.StatusOK || got != want {
				h.anomaly("after rule %s was acknowledged %s, %s lists it: %v (%d)", id, change, r.base(), got, a.status)
			}
		}
		a, err := h.get(r, path, r.tokens[0])
		switch {
		case err != nil:
		case a.status == http.StatusServiceUnavailable:
			h.check503(a, "GET "+path)
		case (a.header.Get("Sandbox-Rule") == id) != want:
			h.anomaly("after rule %s was acknowledged %s, GET %s through %s: %d, Sandbox-Rule %q", id, change, path, r.base(), a.status, a.header.Get("Sandbox-Rule"))
		}
	}
}

// clockStep advances the sandbox clock by a second through one replica,
// then reads it through every replica.
func (c *adminChecker) clockStep(rng *rand.Rand) {
	h := c.h
	r := h.replica(rng.IntN(len(h.replicas)))
	c.mu.Lock()
	c.triedAdvance += time.Second
	c.mu.Unlock()
	a, ok := c.call(r, http.MethodPost, "/__sandbox/clock", map[string]any{"advance": "1s"})
	switch {
	case !ok:
		c.unknown()
	case a.status/100 != 2:
		h.anomaly("advance the clock through %s: %d %s%s", r.base(), a.status, truncate(a.body), h.logged(a))
		return
	default:
		c.mu.Lock()
		c.ackedAdvance += time.Second
		c.clocksMoved++
		c.mu.Unlock()
	}
	for _, r := range h.replicas {
		c.mu.Lock()
		low, high := c.ackedAdvance, c.triedAdvance
		c.mu.Unlock()
		a, ok := c.call(r, http.MethodGet, "/__sandbox/clock", nil)
		if !ok {
			continue
		}
		var v struct{ Offset string }
		if err := json.Unmarshal(a.body, &v); err != nil || a.status != http.StatusOK {
			h.anomaly("read the clock through %s: %d %s%s", r.base(), a.status, truncate(a.body), h.logged(a))
			continue
		}
		off, err := time.ParseDuration(v.Offset)
		if err != nil {
			h.anomaly("clock offset %q through %s: %v", v.Offset, r.base(), err)
			continue
		}
		if off < low || off > high+time.Second {
			h.anomaly("the clock through %s reads offset %s; acknowledged advances make %s, attempted ones %s", r.base(), off, low, high)
		}
	}
}

func (c *adminChecker) unknown() {
	c.mu.Lock()
	c.adminUnknown++
	c.mu.Unlock()
}
