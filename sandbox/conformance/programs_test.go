package conformance

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// program plays one program of the sim's client: its own token and the
// mods (connection, run label, clock offset) its requests carry.
type program struct {
	s     *sim
	token string
	mods  []mod
}

func (p *program) fetch(mods ...mod) string {
	id := p.s.fetchToken(append(append([]mod{}, p.mods...), mods...)...)
	p.token = p.s.token
	return id
}

func (p *program) call(mods ...mod) string {
	p.s.token = p.token
	return p.s.call(append(append([]mod{}, p.mods...), mods...)...)
}

// programsOf returns the report's entries for client id, by label.
func programsOf(t *testing.T, r Report, id string) map[string]ClientReport {
	t.Helper()
	out := map[string]ClientReport{}
	for _, cr := range r.Clients {
		if cr.ClientID == id {
			if _, dup := out[cr.Program.Label]; dup {
				t.Fatalf("two programs labelled %q", cr.Program.Label)
			}
			out[cr.Program.Label] = cr
		}
	}
	return out
}

// TestProgramsJudgedSeparately: three programs that cache their token and
// one that fetches a token per call share a client id. Each is judged on
// its own: the caching ones pass reuses-tokens, the token-per-call one
// fails it and does not pass renews-before-expiry either. Requests on one
// connection, presenting one token, or carrying one run label belong
// together; different run labels never do.
func TestProgramsJudgedSeparately(t *testing.T) {
	s := newSim()
	ua := func(v string) mod { return setHeader("User-Agent", v) }
	cached := []*program{
		{s: s, mods: []mod{conn("127.0.0.1:40001"), ua("python-requests/2.28")}},
		{s: s, mods: []mod{conn("127.0.0.1:40002"), ua("python-requests/2.28")}},
		{s: s, mods: []mod{conn("127.0.0.1:40003"), ua("node")}},
	}
	perCall := &program{s: s, mods: []mod{conn("127.0.0.1:40004"), ua("curl/8.5")}}
	var labelled []*program // a new connection per request, one run label
	for i := range 8 {
		labelled = append(labelled, &program{s: s, mods: []mod{conn("127.0.0.1:4100" + string(rune('0'+i))), runLabel("job-7")}})
	}
	other := &program{s: s, mods: []mod{conn("127.0.0.1:41010"), runLabel("job-8")}}
	for _, p := range cached {
		p.fetch()
	}
	labelled[0].fetch()
	other.fetch()
	for i := range 4 {
		s.wait(time.Second)
		for _, p := range cached {
			p.call()
		}
		perCall.fetch()
		perCall.call()
		labelled[i+1].token = labelled[0].token
		labelled[i+1].call()
		other.call()
	}
	report := Evaluate(s.entries, testOptions())
	programs := programsOf(t, report, "partner")
	want := []string{"python-requests/2.28", "python-requests/2.28 #2", "node", "curl/8.5", "run job-7", "run job-8"}
	if len(programs) != len(want) {
		t.Fatalf("programs %v, want %v", keys(programs), want)
	}
	for _, label := range want {
		cr, ok := programs[label]
		if !ok {
			t.Fatalf("no program %q among %v", label, keys(programs))
		}
		reuse, renew := checkByID(t, cr, CheckReusesTokens), checkByID(t, cr, CheckRenewsBeforeExpiry)
		if label == "curl/8.5" {
			if reuse.Result != Fail || !strings.Contains(reuse.Explanation, "4 new tokens for 4 accepted calls") {
				t.Errorf("token per call: reuses-tokens %s %q, want fail 4 for 4", reuse.Result, reuse.Explanation)
			}
			if renew.Result == Pass || !strings.Contains(renew.Explanation, "not renewal") || len(renew.Evidence) != 3 {
				t.Errorf("token per call: renews-before-expiry %s %q %v, want no pass, 3 new tokens that are not renewal", renew.Result, renew.Explanation, renew.Evidence)
			}
			continue
		}
		if reuse.Result != Pass || !strings.Contains(reuse.Explanation, "1 new token for 4 accepted calls") {
			t.Errorf("%s: reuses-tokens %s %q, want pass, 1 token for 4 calls", label, reuse.Result, reuse.Explanation)
		}
		if renew.Result != NotExercised {
			t.Errorf("%s: renews-before-expiry %s %q, want not-exercised", label, renew.Result, renew.Explanation)
		}
	}
	if c := programs["run job-7"].Program; c.Run != "job-7" || c.Connections != 5 {
		t.Errorf("run job-7: %+v, want its run and 5 connections", c)
	}
}

func keys(m map[string]ClientReport) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// jumpAndRecover plays a client that holds a token, then the sandbox
// clock jumps two hours; after the 401 the client reacts as react says.
func jumpAndRecover(react string) (*sim, string) {
	s := newSim()
	p := &program{s: s, mods: []mod{conn("127.0.0.1:40001")}}
	p.fetch()
	for range 3 {
		s.wait(time.Second)
		p.call()
	}
	s.wait(2 * time.Hour) // POST /__sandbox/clock {"advance":"7200s"}
	p.mods = append(p.mods, offset(7200))
	refused := p.call(refusal("expired"))
	switch react {
	case "recover":
		p.fetch()
		p.call()
		p.call()
	case "reuse":
		p.call(refusal("expired"))
	}
	return s, refused
}

// TestClockJumpJudgedByRecovery: a token that expired because the sandbox
// clock jumped is not the client's fault: renews-before-expiry does not
// fail it, and expired-token judges only whether it recovered.
func TestClockJumpJudgedByRecovery(t *testing.T) {
	tests := []struct {
		react         string
		expired       Result
		renews, reuse Result
	}{
		{"recover", Pass, NotExercised, Pass},
		{"reuse", Fail, NotExercised, Pass},
		{"stop", Warn, NotExercised, Pass},
	}
	for _, tc := range tests {
		t.Run(tc.react, func(t *testing.T) {
			s, refused := jumpAndRecover(tc.react)
			cr := onlyClient(t, Evaluate(s.entries, testOptions()))
			e := checkByID(t, cr, CheckExpiredToken)
			if e.Result != tc.expired || !strings.Contains(e.Explanation, "expired when the sandbox clock moved (obtain a new token and retry)") {
				t.Errorf("expired-token %s %q, want %s naming the clock move", e.Result, e.Explanation, tc.expired)
			}
			if tc.expired != Pass && (len(e.Evidence) == 0 || e.Evidence[0] != refused) {
				t.Errorf("expired-token evidence %v, want %s first", e.Evidence, refused)
			}
			if r := checkByID(t, cr, CheckRenewsBeforeExpiry); r.Result != tc.renews {
				t.Errorf("renews-before-expiry %s %q %v, want %s", r.Result, r.Explanation, r.Evidence, tc.renews)
			}
			if r := checkByID(t, cr, CheckReusesTokens); r.Result != tc.reuse {
				t.Errorf("reuses-tokens %s %q, want %s", r.Result, r.Explanation, tc.reuse)
			}
		})
	}
	// Without the clock move, the same expired token is the client's fault.
	s := newSim()
	p := &program{s: s, mods: []mod{conn("127.0.0.1:40001")}}
	p.fetch()
	p.call()
	s.wait(2 * time.Hour)
	p.call(refusal("expired"))
	p.fetch()
	p.call()
	cr := onlyClient(t, Evaluate(s.entries, testOptions()))
	if r := checkByID(t, cr, CheckRenewsBeforeExpiry); r.Result != Fail {
		t.Errorf("natural expiry: renews-before-expiry %s, want fail", r.Result)
	}
	if e := checkByID(t, cr, CheckExpiredToken); e.Result != Warn || !strings.Contains(e.Explanation, "1 expired (renew the token before it expires") {
		t.Errorf("natural expiry: expired-token %s %q, want warn with the renewal remedy", e.Result, e.Explanation)
	}
}

// TestExpiredTokenExplainsEach401: every 401 is explained by its cause
// with the remedy that fits; a refusal no new token cures (wrong issuer,
// bad signature, deleted client, wrong audience) is a configuration error
// and fails, without advising a retry for it.
func TestExpiredTokenExplainsEach401(t *testing.T) {
	for reason, want := range map[string]string{
		"wrong issuer":   "1 wrong issuer (configuration: the token comes from another identity provider",
		"bad signature":  "1 bad signature (configuration: the token was not signed by this sandbox",
		"unknown client": "1 deleted client (configuration: the client no longer exists",
		"wrong audience": "1 wrong audience (configuration: the token is for another API",
	} {
		t.Run(reason, func(t *testing.T) {
			s := newSim()
			s.fetchToken()
			s.call()
			refused := s.call(status(http.StatusUnauthorized), refusal(reason))
			c := single(t, s, CheckExpiredToken, testOptions())
			if c.Result != Fail || !strings.Contains(c.Explanation, want) || len(c.Evidence) != 1 || c.Evidence[0] != refused {
				t.Errorf("%s: %s %q %v, want fail %q with %s", reason, c.Result, c.Explanation, c.Evidence, want, refused)
			}
			if strings.Contains(c.Explanation, "retry)") {
				t.Errorf("%s: %q advises a retry", reason, c.Explanation)
			}
		})
	}
	// A forced refusal and a clock move, both recovered from: pass, and
	// the explanation counts each cause.
	s, _ := jumpAndRecover("recover")
	s.wait(time.Second)
	s.call(status(http.StatusUnauthorized), func(e *journal.Entry) { e.RuleID = "rule-1" })
	s.fetchToken(offset(7200))
	s.call(offset(7200))
	c := single(t, s, CheckExpiredToken, testOptions())
	if c.Result != Pass || !strings.Contains(c.Explanation, "1 expired when the sandbox clock moved") || !strings.Contains(c.Explanation, "1 forced by a failure rule") {
		t.Errorf("forced and clock move: %s %q", c.Result, c.Explanation)
	}
}
