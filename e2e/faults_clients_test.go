package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// clientState is what one replica says of a runtime client: whether it
// lists the client, issues it a token, and accepts the token it had.
type clientState struct {
	listed, issues, accepts bool
	known                   bool // every probe was answered (no 503, no transport error)
}

// clientRoundTrip creates a client through one replica, checks every
// replica serves it, deletes it through another and checks none does.
func (c *adminChecker) clientRoundTrip(n int, rng *rand.Rand) {
	h := c.h
	id := fmt.Sprintf("faults-client-%d", n)
	r := h.replica(rng.IntN(len(h.replicas)))
	a, ok := c.call(r, http.MethodPost, "/__sandbox/clients", map[string]any{"clientId": id, "roles": []string{"Trials.Read"}})
	if !ok {
		c.unknown()
		c.settleClient(id, "", "")
		return
	}
	if a.status != http.StatusCreated {
		h.anomaly("create client %s through %s: %d %s%s", id, r.base(), a.status, truncate(a.body), h.logged(a))
		return
	}
	var created struct{ ClientSecret string }
	if err := json.Unmarshal(a.body, &created); err != nil || created.ClientSecret == "" {
		h.anomaly("create client %s: 201 without a secret: %s", id, truncate(a.body))
		return
	}
	token := ""
	for _, r := range h.replicas {
		st := c.clientState(r, id, created.ClientSecret, "")
		if st.known && (!st.listed || !st.issues) {
			h.anomaly("after client %s was acknowledged created, %s lists it %v, issues it a token %v", id, r.base(), st.listed, st.issues)
		}
		if token == "" {
			token = c.tokenFor(r, id, created.ClientSecret)
		}
	}
	for _, r := range h.replicas {
		if st := c.clientState(r, id, "", token); st.known && token != "" && !st.accepts {
			h.anomaly("after client %s was acknowledged created, %s refuses its token", id, r.base())
		}
	}
	d := h.replica(rng.IntN(len(h.replicas)))
	a, ok = c.call(d, http.MethodDelete, "/__sandbox/clients/"+id, nil)
	if !ok {
		c.unknown()
		c.settleClient(id, created.ClientSecret, token)
		return
	}
	if a.status/100 != 2 {
		h.anomaly("delete client %s through %s: %d %s%s", id, d.base(), a.status, truncate(a.body), h.logged(a))
		return
	}
	c.expectGone(id, created.ClientSecret, token, "acknowledged deleted")
	c.mu.Lock()
	c.clientsChanged += 2
	c.mu.Unlock()
}

// settleClient follows a creation or deletion of unknown outcome: every
// replica must agree whether the client exists, then the deletion is
// retried until answered, and the client must be gone everywhere.
func (c *adminChecker) settleClient(id, secret, token string) {
	h := c.h
	var states []clientState
	for _, r := range h.replicas {
		states = append(states, c.clientState(r, id, secret, token))
	}
	for i, st := range states {
		for j, other := range states[:i] {
			if st.known && other.known && (st.listed != other.listed || (secret != "" && st.issues != other.issues) || (token != "" && st.accepts != other.accepts)) {
				h.anomaly("after a change of client %s of unknown outcome, replicas disagree: %s lists %v, issues %v, accepts %v; %s lists %v, issues %v, accepts %v",
					id, h.replicas[i].base(), st.listed, st.issues, st.accepts, h.replicas[j].base(), other.listed, other.issues, other.accepts)
			}
		}
	}
	for attempt := 0; ; attempt++ {
		a, ok := c.call(h.replicas[attempt%len(h.replicas)], http.MethodDelete, "/__sandbox/clients/"+id, nil)
		if ok && (a.status/100 == 2 || a.status == http.StatusNotFound) {
			break
		}
		if ok {
			h.anomaly("retry the deletion of client %s: %d %s%s", id, a.status, truncate(a.body), h.logged(a))
			return
		}
		if attempt == 100 {
			h.anomaly("client %s: the deletion's retry was never answered", id)
			return
		}
		time.Sleep(200 * time.Millisecond) // a fault is on; wait for it to heal
	}
	c.expectGone(id, secret, token, "deleted on retry")
}

// expectGone checks no replica lists id, issues it a token or accepts its
// old one.
func (c *adminChecker) expectGone(id, secret, token, how string) {
	for _, r := range c.h.replicas {
		st := c.clientState(r, id, secret, token)
		if st.known && (st.listed || st.issues || st.accepts) {
			c.h.anomaly("after client %s was %s, %s lists it %v, issues it a token %v, accepts its old token %v", id, how, r.base(), st.listed, st.issues, st.accepts)
		}
	}
}

// clientState asks r about client id: listed, a token issued for secret
// (when given), token accepted (when given).
func (c *adminChecker) clientState(r *faultReplica, id, secret, token string) clientState {
	h := c.h
	st := clientState{known: true}
	a, ok := c.call(r, http.MethodGet, "/__sandbox/clients/"+id, nil)
	switch {
	case !ok:
		st.known = false
	case a.status == http.StatusOK:
		st.listed = true
	case a.status != http.StatusNotFound:
		h.anomaly("GET client %s through %s: %d %s%s", id, r.base(), a.status, truncate(a.body), h.logged(a))
		st.known = false
	}
	if secret != "" {
		a, err := do(h.t.Context(), h.c, http.MethodPost, r.base()+"/oauth2/v2.0/token", "", "application/x-www-form-urlencoded", tokenForm(id, secret), nil)
		switch {
		case err != nil:
			h.transportErrs.Add(1)
			st.known = false
		case a.status == http.StatusOK:
			st.issues = true
		case a.status == http.StatusServiceUnavailable:
			h.check503(a, "POST /oauth2/v2.0/token")
			st.known = false
		case a.status != http.StatusBadRequest && a.status != http.StatusUnauthorized:
			h.anomaly("token for client %s through %s: %d %s", id, r.base(), a.status, truncate(a.body))
			st.known = false
		}
	}
	if token != "" {
		a, err := h.get(r, "/api/v1/referrals/trials", token)
		switch {
		case err != nil:
			st.known = false
		case a.status == http.StatusOK:
			st.accepts = true
		case a.status == http.StatusServiceUnavailable:
			h.check503(a, "GET /api/v1/referrals/trials")
			st.known = false
		case a.status != http.StatusUnauthorized:
			h.anomaly("GET /api/v1/referrals/trials as client %s through %s: %d %s%s", id, r.base(), a.status, truncate(a.body), h.logged(a))
			st.known = false
		}
	}
	return st
}

// tokenFor is a token for the client from r, or "" when r did not give
// one.
func (c *adminChecker) tokenFor(r *faultReplica, id, secret string) string {
	a, err := do(c.h.t.Context(), c.h.c, http.MethodPost, r.base()+"/oauth2/v2.0/token", "", "application/x-www-form-urlencoded", tokenForm(id, secret), nil)
	if err != nil {
		return ""
	}
	tok, err := accessToken(a)
	if err != nil {
		return ""
	}
	return tok
}
