package conformance

import (
	"sort"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// MaxAttemptsShown bounds the attempts an UnknownClient lists; Requests gives
// the total.
const MaxAttemptsShown = 10

// Attempt is one request that named a client the sandbox does not know:
// what was tried and how the sandbox answered. It holds no credential
// (the journal never stores one).
type Attempt struct {
	At        string `json:"at"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Status    int    `json:"status"`
	RequestID string `json:"requestId"`
}

// UnknownClient is a client id that requests named (a token request's
// client_id, or a bearer token's claim) but that is not a client of the
// sandbox, so it never authenticated. It is listed apart and never judged:
// a typo in a job's client id must not read as a passing client.
type UnknownClient struct {
	ClientID string `json:"clientId"`
	// Requests counts the journaled requests that named it.
	Requests int `json:"requests"`
	// Attempts are its first MaxAttemptsShown requests, oldest first.
	Attempts []Attempt `json:"attempts"`
}

// splitUnknown moves the entries whose client id known rejects out of
// entries, into one UnknownClient per id, sorted by id. With known nil
// every id counts as known.
func splitUnknown(entries []journal.Entry, known func(clientID string) bool) ([]journal.Entry, []UnknownClient) {
	if known == nil {
		return entries, []UnknownClient{}
	}
	kept := make([]journal.Entry, 0, len(entries))
	byID := map[string]*UnknownClient{}
	for _, e := range entries {
		id := e.ClientID
		if id == "" {
			id = e.NamedClientID // a token request for an id no client has
		}
		if id == "" || known(id) {
			kept = append(kept, e)
			continue
		}
		u := byID[id]
		if u == nil {
			u = &UnknownClient{ClientID: id, Attempts: []Attempt{}}
			byID[id] = u
		}
		u.Requests++
		if len(u.Attempts) < MaxAttemptsShown {
			u.Attempts = append(u.Attempts, Attempt{At: e.At, Method: e.Method, Path: e.Path, Status: e.Status, RequestID: e.RequestID})
		}
	}
	unknown := make([]UnknownClient, 0, len(byID))
	for _, u := range byID {
		unknown = append(unknown, *u)
	}
	sort.Slice(unknown, func(i, j int) bool { return unknown[i].ClientID < unknown[j].ClientID })
	return kept, unknown
}
