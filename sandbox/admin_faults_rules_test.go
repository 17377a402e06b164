package sandbox_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// The admin calls on the rules, the library (its activations and saved
// scenarios) and the journal, and the reads of them, judged under Redis
// faults like adminCalls. The journal reads and the report look at sandbox-partner's entries; the
// client's journal clear works on sandbox-partner-2's, so the two never
// meet in one batch.

// ruleIDs is the ids of every active rule, as s lists them.
func ruleIDs(t *testing.T, s *testSandbox) (ids []string, activations []string) {
	t.Helper()
	var v struct {
		Rules  []struct{ ID string }
		Active []struct{ Name, ClientID string }
	}
	s.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &v)
	for _, r := range v.Rules {
		ids = append(ids, r.ID)
	}
	for _, a := range v.Active {
		activations = append(activations, a.Name+"/"+a.ClientID)
	}
	return ids, activations
}

// countOf is how many times x is in list.
func countOf(list []string, x string) int {
	n := 0
	for _, v := range list {
		if v == x {
			n++
		}
	}
	return n
}

// journaled makes n requests as clientID through obs and waits until the
// journal shows them (another replica's entries arrive in the background).
func journaled(t *testing.T, obs *testSandbox, clientID string, n int) {
	t.Helper()
	tok := obs.token(clientID)
	q := url.Values{"clientId": {clientID}, "afterId": {"0"}, "limit": {"1000"}}
	before := len(obs.journal(q))
	for range n {
		obs.do(request{path: trialsPath, token: tok, plain: true})
	}
	obs.journalOf(q, before+n)
}

// wholePage reports whether a journal page r answered is the one the
// observer reads with the same query, entry for entry, and says it is the
// last only if it is.
func wholePage(t *testing.T, r *response, obs *testSandbox, query string) bool {
	t.Helper()
	var got, want requestsPage
	r.decode(t, &got)
	want = obs.requestsPage(query)
	if len(want.Requests) == 0 || (got.NextAfterID == nil) != (want.NextAfterID == nil) {
		return false
	}
	ids := func(p requestsPage) []uint64 {
		var out []uint64
		for _, e := range p.Requests {
			out = append(out, e.ID)
		}
		return out
	}
	return slices.Equal(ids(got), ids(want))
}

// faultSaved is the saved scenario the reads under faults look up: the
// API answers 500.
const faultSaved = "fs-saved"

// ensureSaved saves faultSaved through obs unless it is saved already,
// and returns its name.
func ensureSaved(t *testing.T, obs *testSandbox, _ int) string {
	t.Helper()
	r := obs.admin(http.MethodPost, "/__sandbox/library", map[string]any{"name": faultSaved, "description": "Read under faults.",
		"rules": []any{map[string]any{"endpoint": "api", "status": 500}}})
	if r.Status != http.StatusCreated && r.Status != http.StatusConflict {
		t.Fatalf("save %s: %d %s", faultSaved, r.Status, r.Body)
	}
	return faultSaved
}

// clearRules removes every rule and activation through obs.
func clearRules(obs *testSandbox, _ string) {
	if r := obs.admin(http.MethodDelete, "/__sandbox/scenarios", nil); r.Status != http.StatusNoContent {
		obs.t.Fatalf("clear the rules: %d %s", r.Status, r.Body)
	}
}

const partnerPage = "clientId=" + partner + "&limit=1000"

// journalRead is the admin call reading a journal page with query, after
// n more requests of the partner: a whole page, or a 503.
func journalRead(name string, n int, query string) adminCall {
	return adminCall{
		name: name,
		prepare: func(t *testing.T, obs *testSandbox, _ int) string {
			journaled(t, obs, partner, n)
			return query
		},
		call: func(s *testSandbox, query string) *response {
			return plainAdmin(s, http.MethodGet, "/__sandbox/requests?"+query, nil)
		},
		answered: wholePage,
	}
}

var ruleCalls = []adminCall{
	{
		name:    "add a rule",
		prepare: func(_ *testing.T, _ *testSandbox, i int) string { return fmt.Sprintf("fr-add-%d", i) },
		call: func(s *testSandbox, id string) *response {
			return plainAdmin(s, http.MethodPost, "/__sandbox/scenarios", map[string]any{"id": id, "path": "/never/" + id, "status": 500})
		},
		took: func(t *testing.T, obs *testSandbox, id string) bool {
			ids, _ := ruleIDs(t, obs)
			return countOf(ids, id) == 1
		},
	},
	{
		// Without an id the sandbox makes one: a retried add must not
		// store the rule twice under two ids.
		name:    "add a rule without an id",
		tidy:    clearRules,
		prepare: func(_ *testing.T, _ *testSandbox, i int) string { return fmt.Sprintf("/never/gen-%d", i) },
		call: func(s *testSandbox, path string) *response {
			return plainAdmin(s, http.MethodPost, "/__sandbox/scenarios", map[string]any{"path": path, "status": 500})
		},
		took: func(t *testing.T, obs *testSandbox, path string) bool {
			var v struct{ Rules []struct{ Path string } }
			obs.admin(http.MethodGet, "/__sandbox/scenarios", nil).decode(t, &v)
			n := 0
			for _, r := range v.Rules {
				if r.Path == path {
					n++
				}
			}
			return n == 1
		},
	},
	{
		name: "delete a rule",
		tidy: clearRules,
		prepare: func(_ *testing.T, obs *testSandbox, i int) string {
			return obs.addRule(map[string]any{"id": fmt.Sprintf("fr-del-%d", i), "path": "/never/x", "status": 500})
		},
		call: func(s *testSandbox, id string) *response {
			return plainAdmin(s, http.MethodDelete, "/__sandbox/scenarios/"+id, nil)
		},
		took: func(t *testing.T, obs *testSandbox, id string) bool {
			ids, _ := ruleIDs(t, obs)
			return countOf(ids, id) == 0
		},
	},
	{
		name: "activate a scenario",
		tidy: clearRules,
		prepare: func(_ *testing.T, _ *testSandbox, i int) string {
			return fmt.Sprintf("ci-act-%d", i)
		},
		call: func(s *testSandbox, id string) *response {
			return plainAdmin(s, http.MethodPost, "/__sandbox/library/flaky", map[string]any{"clientId": id})
		},
		took: func(t *testing.T, obs *testSandbox, id string) bool {
			_, active := ruleIDs(t, obs)
			return countOf(active, "flaky/"+id) == 1
		},
	},
	{
		name: "deactivate a scenario",
		tidy: clearRules,
		prepare: func(_ *testing.T, obs *testSandbox, i int) string {
			id := fmt.Sprintf("ci-deact-%d", i)
			obs.activate("flaky", id)
			return id
		},
		call: func(s *testSandbox, id string) *response {
			return plainAdmin(s, http.MethodDelete, "/__sandbox/library/flaky?clientId="+id, nil)
		},
		took: func(t *testing.T, obs *testSandbox, id string) bool {
			_, active := ruleIDs(t, obs)
			return countOf(active, "flaky/"+id) == 0
		},
	},
	{
		name: "deactivate a scenario everywhere",
		tidy: clearRules,
		prepare: func(_ *testing.T, obs *testSandbox, _ int) string {
			obs.activate("slow-network", "")
			obs.activate("slow-network", "ci-everywhere")
			return ""
		},
		call: func(s *testSandbox, _ string) *response {
			return plainAdmin(s, http.MethodDelete, "/__sandbox/library/slow-network", nil)
		},
		took: func(t *testing.T, obs *testSandbox, _ string) bool {
			_, active := ruleIDs(t, obs)
			return countOf(active, "slow-network/") == 0 && countOf(active, "slow-network/ci-everywhere") == 0
		},
	},
	{
		name: "clear a client's journal",
		prepare: func(t *testing.T, obs *testSandbox, _ int) string {
			journaled(t, obs, partner2, 1)
			return partner2
		},
		call: func(s *testSandbox, id string) *response {
			return plainAdmin(s, http.MethodDelete, "/__sandbox/requests?clientId="+id, nil)
		},
		took: func(t *testing.T, obs *testSandbox, id string) bool {
			return len(obs.journal(url.Values{"clientId": {id}, "afterId": {"0"}})) == 0
		},
	},
	{
		name: "list the rules",
		tidy: clearRules,
		prepare: func(_ *testing.T, obs *testSandbox, i int) string {
			id := obs.addRule(map[string]any{"id": fmt.Sprintf("fr-list-%d", i), "path": "/never/x", "status": 500})
			obs.activate("flaky", "ci-list")
			return id
		},
		call: func(s *testSandbox, _ string) *response {
			return plainAdmin(s, http.MethodGet, "/__sandbox/scenarios", nil)
		},
		answered: func(t *testing.T, r *response, obs *testSandbox, id string) bool {
			var v struct {
				Rules  []struct{ ID string }
				Active []struct{ Name, ClientID string }
			}
			r.decode(t, &v)
			found := slices.ContainsFunc(v.Rules, func(r struct{ ID string }) bool { return r.ID == id })
			bound := slices.ContainsFunc(v.Active, func(a struct{ Name, ClientID string }) bool { return a.ClientID == "ci-list" })
			return found && bound
		},
	},
	{
		name: "get a rule",
		tidy: clearRules,
		prepare: func(_ *testing.T, obs *testSandbox, i int) string {
			return obs.addRule(map[string]any{"id": fmt.Sprintf("fr-get-%d", i), "path": "/never/x", "status": 500})
		},
		call: func(s *testSandbox, id string) *response {
			return plainAdmin(s, http.MethodGet, "/__sandbox/scenarios/"+id, nil)
		},
		answered: func(t *testing.T, r *response, _ *testSandbox, id string) bool {
			var v struct{ ID string }
			r.decode(t, &v)
			return v.ID == id
		},
	},
	{
		name: "list the library",
		tidy: clearRules,
		prepare: func(t *testing.T, obs *testSandbox, i int) string {
			ensureSaved(t, obs, i)
			obs.activate("flaky", "ci-lib")
			return "ci-lib"
		},
		call: func(s *testSandbox, _ string) *response {
			return plainAdmin(s, http.MethodGet, "/__sandbox/library", nil)
		},
		answered: func(t *testing.T, r *response, _ *testSandbox, id string) bool {
			var v struct {
				Scenarios []struct{ Name string }
				Active    []struct{ Name, ClientID string }
			}
			r.decode(t, &v)
			saved := slices.ContainsFunc(v.Scenarios, func(sc struct{ Name string }) bool { return sc.Name == faultSaved })
			return saved && slices.ContainsFunc(v.Active, func(a struct{ Name, ClientID string }) bool { return a.ClientID == id })
		},
	},
	{
		name:    "save a scenario",
		prepare: func(_ *testing.T, _ *testSandbox, i int) string { return fmt.Sprintf("fs-save-%d", i) },
		call: func(s *testSandbox, name string) *response {
			return plainAdmin(s, http.MethodPost, "/__sandbox/library", savedBody(name))
		},
		took: func(_ *testing.T, obs *testSandbox, name string) bool {
			return obs.admin(http.MethodGet, "/__sandbox/library/"+name, nil).Status == http.StatusOK
		},
	},
	{
		name:    "get a saved scenario",
		prepare: ensureSaved,
		call: func(s *testSandbox, name string) *response {
			return plainAdmin(s, http.MethodGet, "/__sandbox/library/"+name, nil)
		},
		answered: func(t *testing.T, r *response, _ *testSandbox, name string) bool {
			var v struct {
				Name  string
				Rules []struct{ Status int }
			}
			r.decode(t, &v)
			return v.Name == name && len(v.Rules) == 1 && v.Rules[0].Status == http.StatusInternalServerError
		},
	},
	{
		name: "activate a saved scenario",
		tidy: clearRules,
		prepare: func(t *testing.T, obs *testSandbox, i int) string {
			ensureSaved(t, obs, i)
			return fmt.Sprintf("ci-sact-%d", i)
		},
		call: func(s *testSandbox, id string) *response {
			return plainAdmin(s, http.MethodPost, "/__sandbox/library/"+faultSaved, map[string]any{"clientId": id})
		},
		took: func(t *testing.T, obs *testSandbox, id string) bool {
			_, active := ruleIDs(t, obs)
			return countOf(active, faultSaved+"/"+id) == 1
		},
	},
	{
		// X-Sandbox-Scenario naming a saved scenario: its forced 500, or
		// a 503 with Retry-After; never a 400 calling the name unknown,
		// nor the unforced 200.
		name: "a partner request naming a saved scenario",
		prepare: func(t *testing.T, obs *testSandbox, i int) string {
			ensureSaved(t, obs, i)
			return obs.token(partner)
		},
		call: func(s *testSandbox, tok string) *response {
			return s.do(request{path: trialsPath, token: tok, plain: true, headers: map[string]string{sandbox.ScenarioHeader: faultSaved}})
		},
		forced: http.StatusInternalServerError,
		// The forced answer is the proof: the request changes nothing.
		took:     func(*testing.T, *testSandbox, string) bool { return true },
		answered: func(*testing.T, *response, *testSandbox, string) bool { return false },
	},
	journalRead("walk the journal", 2, "afterId=0&"+partnerPage),
	journalRead("read the newest of the journal", 1, partnerPage),
	{
		name: "the report",
		prepare: func(t *testing.T, obs *testSandbox, _ int) string {
			journaled(t, obs, partner, 1)
			return partner
		},
		call: func(s *testSandbox, id string) *response {
			return plainAdmin(s, http.MethodGet, "/__sandbox/report?clientId="+id, nil)
		},
		answered: func(t *testing.T, r *response, obs *testSandbox, id string) bool {
			requests := func(r *response) int {
				var v struct{ Clients []struct{ Requests int } }
				r.decode(t, &v)
				n := 0
				for _, c := range v.Clients {
					n += c.Requests
				}
				return n
			}
			return requests(r) > 0 && requests(r) == requests(obs.admin(http.MethodGet, "/__sandbox/report?clientId="+id, nil))
		},
	},
	{
		// A partner request matching a rule that fires once: its answer is
		// the forced 500, with the rule then used up, or a 503 with
		// Retry-After; never the unforced 200, a rule silently skipped.
		name: "a partner request whose rule decides",
		tidy: clearRules,
		prepare: func(_ *testing.T, obs *testSandbox, i int) string {
			c := obs.newClient(map[string]any{"clientId": fmt.Sprintf("ci-dec-%d", i)})
			rule := obs.addRule(map[string]any{"id": fmt.Sprintf("fr-dec-%d", i), "clientId": c.ClientID, "endpoint": "api", "status": 500, "times": 1})
			return rule + " " + obs.clientToken(c)
		},
		call: func(s *testSandbox, arg string) *response {
			_, tok, _ := strings.Cut(arg, " ")
			return s.do(request{path: trialsPath, token: tok, plain: true})
		},
		forced: http.StatusInternalServerError,
		took: func(t *testing.T, obs *testSandbox, arg string) bool {
			rule, _, _ := strings.Cut(arg, " ")
			return obs.admin(http.MethodGet, "/__sandbox/scenarios/"+rule, nil).Status == http.StatusNotFound
		},
		answered: func(*testing.T, *response, *testSandbox, string) bool { return false },
	},
	{
		name: "clear the rules",
		tidy: clearRules,
		prepare: func(_ *testing.T, obs *testSandbox, i int) string {
			obs.addRule(map[string]any{"id": fmt.Sprintf("fr-clr-%d", i), "path": "/never/x", "status": 500})
			obs.activate("flaky", "")
			return ""
		},
		call: func(s *testSandbox, _ string) *response {
			return plainAdmin(s, http.MethodDelete, "/__sandbox/scenarios", nil)
		},
		took: func(t *testing.T, obs *testSandbox, _ string) bool {
			ids, active := ruleIDs(t, obs)
			return len(ids) == 0 && len(active) == 0
		},
		undoesOthers: true,
	},
	{
		name: "clear the journal",
		prepare: func(t *testing.T, obs *testSandbox, _ int) string {
			journaled(t, obs, partner, 1)
			return ""
		},
		call: func(s *testSandbox, _ string) *response {
			return plainAdmin(s, http.MethodDelete, "/__sandbox/requests", nil)
		},
		took: func(t *testing.T, obs *testSandbox, _ string) bool {
			return len(obs.journal(url.Values{"path": {trialsPath}, "afterId": {"0"}})) == 0
		},
		undoesOthers: true,
	},
}

// TestRuleCallsUnderRedisFaults is TestAdminCallsUnderRedisFaults for the
// admin calls and reads of the rules, the library's activations and the
// journal, and a partner request whose rule decision needs Redis.
func TestRuleCallsUnderRedisFaults(t *testing.T) {
	t.Parallel()
	callsUnderRedisFaults(t, ruleCalls)
}

// TestRuleCallsWithWritesRefused is TestAdminCallsWithWritesRefused for
// the same calls.
func TestRuleCallsWithWritesRefused(t *testing.T) {
	t.Parallel()
	callsWithWritesRefused(t, func() []adminCall { return ruleCalls })
}

// TestJournalReadFailingPartWayIsNotAPage: a journal read takes 500
// entries a command; when a later command fails, the answer is a 503 with
// Retry-After or the whole page, never the first batch presented as all
// there is.
func TestJournalReadFailingPartWayIsNotAPage(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := redistest.NewFaultProxy(t, srv)
	subject, obs := faultPair(t, srv, proxy)
	journaled(t, obs, partner, 600)
	faults := []redistest.Fault{redistest.Drop, redistest.ErrorReply, redistest.LoseReply}
	for _, tc := range []struct{ query, command string }{
		{"afterId=0&" + partnerPage, "XRANGE"},
		{partnerPage, "XREVRANGE"},
	} {
		c := adminCall{
			name:     "GET /__sandbox/requests?" + tc.query,
			answered: wholePage,
		}
		for _, fault := range faults {
			proxy.ArmMatching(func(cmd []string) bool { return cmd[0] == tc.command }, 2, fault)
			r := plainAdmin(subject, http.MethodGet, "/__sandbox/requests?"+tc.query, nil)
			if !proxy.Fired() {
				t.Fatalf("%s: no second %s to fail", c.name, tc.command)
			}
			proxy.Arm(0, redistest.Drop)
			judge(t, c, fmt.Sprintf("second %s failed (fault %d)", tc.command, fault), r, obs, tc.query)
		}
	}
}
