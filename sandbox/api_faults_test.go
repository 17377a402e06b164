package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
)

// apiWrites are the API's writes as admin calls are judged under Redis
// faults: a 201 only for a referral stored exactly once, and any failure a
// 503 with Retry-After. A Redis error reply (a server loading its data, out
// of memory, a replica turned read-only) is the backend failing, never the
// sandbox's own fault, so it must not surface as a 500.
func apiWrites() []adminCall {
	// The token comes from the observer, before the proxy is armed: the
	// replicas share their signing keys and clients.
	var tok string
	prepare := func(_ *testing.T, obs *testSandbox, i int) string {
		if tok == "" {
			tok = obs.token(partner)
		}
		return fmt.Sprintf("api-fault-%d", i)
	}
	return []adminCall{
		{
			name:    "submit a referral",
			prepare: prepare,
			call: func(s *testSandbox, id string) *response {
				body := referralBody(fixtureTrialID)
				body["notes"] = id
				return s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: tok, body: body, plain: true})
			},
			took: func(t *testing.T, obs *testSandbox, id string) bool {
				return referralsWithNotes(t, obs, id) == 1
			},
		},
		{
			name:    "submit a qualified referral",
			prepare: prepare,
			call: func(s *testSandbox, id string) *response {
				return s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: tok, body: qualifiedBody(id), plain: true})
			},
			took: func(_ *testing.T, obs *testSandbox, id string) bool {
				r := obs.do(request{path: "/api/v1/referrals/qualified/" + url.PathEscape(id), token: obs.token(partner), plain: true})
				return r.Status == http.StatusOK
			},
		},
	}
}

// referralsWithNotes counts the partner's referrals whose notes are notes,
// over every page, through obs.
func referralsWithNotes(t *testing.T, obs *testSandbox, notes string) int {
	t.Helper()
	tok := obs.token(partner)
	n := 0
	query := "limit=100"
	for {
		p := obs.fetchPage(referralsList, tok, query)
		for _, rec := range p.records {
			var r struct{ Notes string }
			if err := json.Unmarshal(rec, &r); err != nil {
				t.Fatal(err)
			}
			if r.Notes == notes {
				n++
			}
		}
		if p.nextCursor == nil {
			return n
		}
		query = "limit=100&cursor=" + url.QueryEscape(*p.nextCursor)
	}
}

// TestAPIWritesUnderRedisFaults: each Redis command of each API write
// fails in turn, every way the fault proxy can.
func TestAPIWritesUnderRedisFaults(t *testing.T) {
	t.Parallel()
	callsUnderRedisFaults(t, apiWrites())
}

// TestAPIWritesWithWritesRefused: Redis out of memory or pausing writes.
func TestAPIWritesWithWritesRefused(t *testing.T) {
	t.Parallel()
	callsWithWritesRefused(t, apiWrites)
}

// TestAPIWriteWhoseStoreScriptRedisRefuses: the store's own script of a
// qualified submission answered with an error (Redis out of memory), as
// when the request reuses this replica's shared read and the store's
// script is its first command, is a 503 with Retry-After, and nothing is
// stored. The fault suite met this in a ./test run as a 500: its injected
// error was then an unknown command's, which the sandbox answers as its
// own failure.
func TestAPIWriteWhoseStoreScriptRedisRefuses(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := redistest.NewFaultProxy(t, srv)
	subject, obs := faultPair(t, srv, proxy)
	tok := obs.token(partner)
	armPartnersStoreScript(proxy, redistest.ErrorReply)
	r := subject.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: tok, body: qualifiedBody("refused-by-redis"), plain: true})
	if !proxy.Fired() {
		t.Fatal("no store script of the partner's passed the proxy")
	}
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Errorf("submit whose store script Redis refused: %d (Retry-After %q) %s; want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if got := obs.do(request{path: "/api/v1/referrals/qualified/refused-by-redis", token: tok, plain: true}); got.Status != http.StatusNotFound {
		t.Errorf("the refused referral reads %d, want 404: nothing stored", got.Status)
	}
}
