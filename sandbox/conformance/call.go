package conformance

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// Endpoint kinds as the journal records them.
const (
	endpointToken = "token"
	endpointAPI   = "api"
	endpointPing  = "ping"
)

// call is a journal entry with its times parsed.
type call struct {
	journal.Entry
	start, end time.Time
	// timed is false when the entry's time could not be read; such an
	// entry is left out of every judgement about time.
	timed bool
	// expires is the token's expiry (issued or presented), zero if none.
	expires time.Time
}

func newCall(e journal.Entry) call {
	c := call{Entry: e}
	if at, err := time.Parse(time.RFC3339Nano, e.At); err == nil {
		c.start, c.timed = at, true
		c.end = at.Add(time.Duration(e.DurationMs * float64(time.Millisecond)))
	}
	if exp, err := time.Parse(time.RFC3339Nano, e.TokenExpiresAt); err == nil {
		c.expires = exp
	}
	return c
}

// ref is how evidence names the request: its request id, or the journal
// entry number when it has none.
func (c call) ref() string {
	if c.RequestID != "" {
		return c.RequestID
	}
	return "#" + strconv.FormatUint(c.ID, 10)
}

func (c call) isToken() bool { return c.Endpoint == endpointToken }

// usesToken reports whether the request is one that presents a bearer
// token: an API call or a ping.
func (c call) usesToken() bool { return c.Endpoint == endpointAPI || c.Endpoint == endpointPing }

// issued reports whether the request obtained a token.
func (c call) issued() bool { return c.isToken() && c.Status == http.StatusOK && !c.expires.IsZero() }

// presentedExpired reports whether the call carried a token that had
// already expired when the call started.
func (c call) presentedExpired() bool {
	return c.usesToken() && c.timed && !c.expires.IsZero() && !c.start.Before(c.expires)
}

// failed reports whether the attempt failed in a way a client should retry
// with backoff: a server error, a rate limit, a fault, or no answer at all.
func (c call) failed() bool {
	return c.Fault != "" || c.Status == 0 || c.Status == http.StatusTooManyRequests || c.Status >= 500
}

// startedAfter reports whether c started once prev had been answered, so
// that c can be the client's reaction to prev. Without times, journal order
// decides.
func (c call) startedAfter(prev call) bool {
	if !c.timed || !prev.timed {
		return true
	}
	return !c.start.Before(prev.end.Add(-orderingTolerance))
}

// refs names calls as evidence, in order, without repeats.
func refs(calls ...call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.ref()
	}
	return unique(out)
}

// unique drops repeated ids, keeping the first of each.
func unique(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// capEvidence names each request once in c's evidence (a request can show
// a rule broken twice, as the reaction to one 401 and the refused call
// before the next), bounds it to MaxEvidence, saying so in the
// explanation, and never returns nil (the JSON shows an empty list).
func capEvidence(c *Check) []string {
	c.Evidence = unique(c.Evidence)
	if len(c.Evidence) > MaxEvidence {
		c.Explanation += fmt.Sprintf(" (first %d of %d request ids shown)", MaxEvidence, len(c.Evidence))
		return c.Evidence[:MaxEvidence]
	}
	if c.Evidence == nil {
		return []string{}
	}
	return c.Evidence
}

// plural writes n and a noun, pluralised with an s when n is not 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
