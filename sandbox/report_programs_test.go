package sandbox_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/conformance"
)

// partnerProgram is one process of the sandbox-partner client: its own
// connections (its own transport), User-Agent and optional run label.
type partnerProgram struct {
	t      *testing.T
	sb     *conformanceSandbox
	client *http.Client
	ua     string
	run    string
	token  string
}

func newPartnerProgram(t *testing.T, sb *conformanceSandbox, ua, run string, keepAlive bool) *partnerProgram {
	tr := sb.tlsClient.Transport.(*http.Transport).Clone()
	tr.DisableKeepAlives = !keepAlive
	t.Cleanup(tr.CloseIdleConnections)
	return &partnerProgram{t: t, sb: sb, client: &http.Client{Transport: tr}, ua: ua, run: run}
}

func (p *partnerProgram) do(req *http.Request) *http.Response {
	p.t.Helper()
	req.Header.Set("User-Agent", p.ua)
	if p.run != "" {
		req.Header.Set(sandbox.RunHeader, p.run)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	return resp
}

func (p *partnerProgram) fetch() {
	p.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {conformanceClient},
		"client_secret": {conformanceClient + "-secret"}, "scope": {idp.DefaultResource + "/.default"}}
	req, _ := http.NewRequest(http.MethodPost, p.sb.tls.URL+"/"+idp.DefaultTenant+"/oauth2/v2.0/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp := p.do(req)
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK {
		p.t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	p.token = tok.AccessToken
}

// call GETs path with the program's token and returns the status.
func (p *partnerProgram) call(path string) int {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.sb.tls.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp := p.do(req)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestReportJudgesEachProgram runs four programs under one client id
// against the real server, then moves the sandbox clock two hours: the
// report has one entry per program, judges the token-per-call one alone,
// counts nothing against the one that recovered from the clock move, and
// warns the one that gave up after the 401.
func TestReportJudgesEachProgram(t *testing.T) {
	sb := newConformanceSandbox(t)
	const trials = "/api/v1/referrals/trials"
	recovers := newPartnerProgram(t, sb, "recovers/1.0", "", true)
	givesUp := newPartnerProgram(t, sb, "gives-up/1.0", "", true)
	perCall := newPartnerProgram(t, sb, "run per-call", "", true)
	labelled := newPartnerProgram(t, sb, "labelled/1.0", "ci-job-7", false) // a new connection per request
	for _, p := range []*partnerProgram{recovers, givesUp, labelled} {
		p.fetch()
	}
	for i := range 3 {
		for _, p := range []*partnerProgram{recovers, givesUp, labelled} {
			if st := p.call(trials); st != http.StatusOK {
				t.Fatalf("%s: %d", p.ua, st)
			}
		}
		perCall.fetch()
		path := trials
		if i == 0 {
			path += "?run=per-call" // ?run= labels a program the API answers as usual
		}
		if st := perCall.call(path); st != http.StatusOK {
			t.Fatalf("per-call: %d", st)
		}
	}
	body, _ := json.Marshal(map[string]string{"advance": "7200s"})
	resp, err := sb.tlsClient.Post(sb.adminBaseURL+"/__sandbox/clock", "application/json", bytes.NewReader(body))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("advance the clock: %v %v", err, resp)
	}
	resp.Body.Close()
	for _, p := range []*partnerProgram{recovers, givesUp} {
		if st := p.call(trials); st != http.StatusUnauthorized {
			t.Fatalf("%s after the clock move: %d, want 401", p.ua, st)
		}
	}
	recovers.fetch()
	if st := recovers.call(trials); st != http.StatusOK {
		t.Fatalf("recovered: %d", st)
	}

	_, r := sb.report("?clientId=" + conformanceClient)
	byLabel := map[string]conformance.ClientReport{}
	for _, cr := range r.Clients {
		byLabel[cr.Program.Label] = cr
	}
	if len(r.Clients) != 4 {
		t.Fatalf("%d programs %v, want 4", len(r.Clients), byLabel)
	}
	result := func(label, check string) conformance.Check {
		t.Helper()
		cr, ok := byLabel[label]
		if !ok {
			t.Fatalf("no program %q in %v", label, byLabel)
		}
		for _, c := range cr.Checks {
			if c.ID == check {
				return c
			}
		}
		t.Fatalf("no check %s", check)
		return conformance.Check{}
	}
	if c := result("recovers/1.0", conformance.CheckExpiredToken); c.Result != conformance.Pass || !strings.Contains(c.Explanation, "expired when the sandbox clock moved") {
		t.Errorf("recovers expired-token: %s %q", c.Result, c.Explanation)
	}
	if c := result("recovers/1.0", conformance.CheckRenewsBeforeExpiry); c.Result == conformance.Fail {
		t.Errorf("recovers renews-before-expiry fails after a clock move: %q", c.Explanation)
	}
	if c := result("gives-up/1.0", conformance.CheckExpiredToken); c.Result != conformance.Warn || !strings.Contains(c.Explanation, "neither fetched a new token nor retried") {
		t.Errorf("gives-up expired-token: %s %q", c.Result, c.Explanation)
	}
	if c := result("run per-call", conformance.CheckReusesTokens); c.Result != conformance.Fail || !strings.Contains(c.Explanation, "3 new tokens for 3 accepted calls") {
		t.Errorf("per-call reuses-tokens: %s %q", c.Result, c.Explanation)
	}
	if c := result("run per-call", conformance.CheckRenewsBeforeExpiry); c.Result == conformance.Pass {
		t.Errorf("per-call passes renews-before-expiry: %q", c.Explanation)
	}
	for _, label := range []string{"recovers/1.0", "gives-up/1.0", "run ci-job-7"} {
		if c := result(label, conformance.CheckReusesTokens); c.Result != conformance.Pass {
			t.Errorf("%s reuses-tokens: %s %q", label, c.Result, c.Explanation)
		}
	}
	if p := byLabel["run ci-job-7"].Program; p.Run != "ci-job-7" || p.UserAgent != "labelled/1.0" || p.Connections < 4 {
		t.Errorf("labelled program %+v, want its run, User-Agent and a connection per request", p)
	}
}

// TestRunLabelChecked: a run label that is not 1 to 64 safe characters is
// a 400 naming the header, not journaled altered.
func TestRunLabelChecked(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	const badRequest = "urn:referrals-sandbox:problem:bad-request"
	r := s.do(request{method: http.MethodGet, path: "/health/ping", token: token, headers: map[string]string{sandbox.RunHeader: strings.Repeat("x", 65)}, invalid: true})
	if p := wantProblem(t, r, http.StatusBadRequest, badRequest); !strings.Contains(p.Detail, sandbox.RunHeader) {
		t.Errorf("detail %q does not name %s", p.Detail, sandbox.RunHeader)
	}
	r = s.do(request{method: http.MethodGet, path: "/health/ping?run=job%207", token: token, invalid: true})
	wantProblem(t, r, http.StatusBadRequest, badRequest)
	r = s.do(request{method: http.MethodGet, path: "/api/v1/referrals/trials?run=job-7", token: token})
	if r.Status != http.StatusOK {
		t.Errorf("?run=job-7: %d %s", r.Status, r.Body)
	}
}
