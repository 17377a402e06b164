package sandbox_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/conformance"
)

// Identity: a request belongs to a client only when its token really came
// from the sandbox. These tests replay the attacks of a caller who can
// reach the port but holds no client's credentials.

// forgedAs returns two tokens claiming azp clientID that the sandbox never
// issued: a genuine token's payload rewritten (signature kept), and the
// claims signed by another key under the sandbox's kid.
func (f *forgery) forgedAs(clientID string) []string {
	claims := f.with(map[string]any{"azp": clientID})
	return []string{
		withPayload(f.partnerJWT, claims),
		f.sign(claims, jwa.RS256, f.otherKey, map[string]any{jws.KeyIDKey: f.kid, jws.TypeKey: "JWT"}),
	}
}

// bearer is an Authorization header carrying token.
func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// TestForgedAzpDoesNotSpendTheClientsRateLimit: tokens claiming partner-2
// spend the small shared unverified bucket, never partner-2's, and their
// 401s carry that bucket's numbers, not partner-2's.
func TestForgedAzpDoesNotSpendTheClientsRateLimit(t *testing.T) {
	t.Parallel()
	const burst = 2 * sandbox.UnverifiedRateBurst // partner-2's; forgers get UnverifiedRateBurst
	s := newSandbox(t, withRateLimit(slowRate, burst))
	forged := newForgery(t, s).forgedAs(partner2)
	statuses := map[int]int{}
	for i := range sandbox.UnverifiedRateBurst + 20 {
		r := s.do(request{path: trialsPath, headers: bearer(forged[i%2]), invalid: true})
		statuses[r.Status]++
		if got := r.Header.Get("RateLimit-Limit"); got != fmt.Sprint(sandbox.UnverifiedRateBurst) {
			t.Fatalf("forged call %d: %d with RateLimit-Limit %q, want the unverified bucket's %d", i, r.Status, got, sandbox.UnverifiedRateBurst)
		}
		if r.Status == http.StatusTooManyRequests {
			if p := r.problem(t); strings.Contains(p.Detail, partner2) || !strings.Contains(p.Detail, "did not issue") {
				t.Errorf("429 to a forger: %q, want it to name the unverified bucket, not %s", p.Detail, partner2)
			}
		}
	}
	if statuses[http.StatusUnauthorized] != sandbox.UnverifiedRateBurst || statuses[http.StatusTooManyRequests] != 20 {
		t.Errorf("forged calls answered %v, want %d×401 then 20×429", statuses, sandbox.UnverifiedRateBurst)
	}
	// partner-2's own first call finds its whole burst.
	r := s.do(request{path: trialsPath, token: s.token(partner2)})
	if r.Status != http.StatusOK || r.Header.Get("RateLimit-Limit") != fmt.Sprint(burst) || r.Header.Get("RateLimit-Remaining") != fmt.Sprint(burst-1) {
		t.Errorf("%s after the forgeries: %d, RateLimit-Limit %q Remaining %q; want 200, %d, %d", partner2, r.Status,
			r.Header.Get("RateLimit-Limit"), r.Header.Get("RateLimit-Remaining"), burst, burst-1)
	}
}

// TestForgedAzpDoesNotUseUpTheClientsRule: token-expired bound to
// partner-2 fires once for partner-2; a forger claiming partner-2 is
// refused for its signature and leaves the rule to partner-2.
func TestForgedAzpDoesNotUseUpTheClientsRule(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	forged := newForgery(t, s).forgedAs(partner2)
	s.activate("token-expired", partner2)
	for _, tok := range forged {
		r := s.do(request{path: trialsPath, headers: bearer(tok), invalid: true})
		if r.Status != http.StatusUnauthorized || r.Header.Get(sandbox.RuleHeader) != "" {
			t.Errorf("forged %s token: %d, rule %q; want a plain 401, no rule", partner2, r.Status, r.Header.Get(sandbox.RuleHeader))
		}
		if d := wantChallenge(t, r, "invalid_token")["error_description"]; !strings.Contains(d, string(idp.ReasonSignature)) {
			t.Errorf("forged token refused with %q, want %q", d, idp.ReasonSignature)
		}
	}
	tok := s.token(partner2)
	first := s.do(request{path: trialsPath, token: tok})
	if first.Status != http.StatusUnauthorized || first.Header.Get(sandbox.RuleHeader) == "" {
		t.Errorf("%s's first real call: %d, rule %q; want the scenario's 401", partner2, first.Status, first.Header.Get(sandbox.RuleHeader))
	}
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
		t.Errorf("%s's second call: %d, want 200", partner2, r.Status)
	}
}

// TestForgedAzpIsNotJournaledAsTheClient: forged calls are journaled
// without a client, so partner-2's report judges partner-2 alone (a forger
// reusing its refused token would otherwise fail partner-2's CI gate). An
// expired but genuine token still belongs to its client.
func TestForgedAzpIsNotJournaledAsTheClient(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	forged := newForgery(t, s).forgedAs(partner2)
	tok := s.token(partner2)
	for range 3 {
		if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
			t.Fatalf("%s: %d", partner2, r.Status)
		}
	}
	for range 3 {
		for _, f := range forged {
			s.do(request{path: trialsPath, headers: bearer(f), invalid: true})
		}
	}
	s.advance(2 * time.Hour)
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusUnauthorized {
		t.Fatalf("expired token: %d, want 401", r.Status)
	}

	mine := s.journal(queryOf("clientId", partner2))
	if len(mine) != 5 { // the token request, three calls, the expired call
		t.Errorf("journal holds %d entries for %s, want its own 5: %+v", len(mine), partner2, mine)
	}
	if last := mine[len(mine)-1]; last.Status != http.StatusUnauthorized || last.TokenID == "" {
		t.Errorf("the expired call is journaled as %+v, want %s's 401 with its token id", last, partner2)
	}
	unidentified := 0
	for _, e := range s.journal(nil) {
		if e.ClientID == "" && e.Endpoint == "api" {
			unidentified++
		}
	}
	if unidentified != 6 {
		t.Errorf("%d API calls journaled without a client, want the 6 forged ones", unidentified)
	}
	var report conformance.Report
	s.admin(http.MethodGet, "/__sandbox/report", nil).decode(t, &report)
	for _, c := range report.Clients {
		switch c.ClientID {
		case partner2:
			if c.Requests != 5 {
				t.Errorf("report judges %d requests of %s, want 5", c.Requests, partner2)
			}
			for _, check := range c.Checks {
				if check.ID == conformance.CheckExpiredToken && check.Result == conformance.Fail {
					t.Errorf("%s fails %s because of a forger: %s", partner2, check.ID, check.Explanation)
				}
			}
		case conformance.Unidentified, partner, noroles: // newForgery's own tokens
		default:
			t.Errorf("report has a client %q that never had a token", c.ClientID)
		}
	}
}

// TestForgedIdentitiesAddNoState: a thousand made-up azp values (refused
// for their signature, or signed with the sandbox's key for clients that do
// not exist) add no rate-limit bucket, no rule counter and no report
// section: the per-client maps stay as small as the client list.
// forgedIdentities is how many forged client ids TestForgedIdentitiesAddNoState sends.
const forgedIdentities = 300

func TestForgedIdentitiesAddNoState(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withRateLimit(sandbox.DefaultRateLimit, sandbox.DefaultRateBurst)) // limiting on, so buckets would show
	f := newForgery(t, s)
	ruleID := s.addRule(map[string]any{"endpoint": "api", "status": 503, "times": 1, "perClient": true})
	padding := strings.Repeat("x", 2000) // each claim worth keeping, if it were kept
	// 300 identities show the per-client state does not grow with them
	// (e2e's TestForgedTokensKeepNoState sends thousands to the binary).
	for i := range forgedIdentities {
		claims := f.with(map[string]any{"azp": fmt.Sprintf("forged-%04d-%s", i, padding)})
		tok := withPayload(f.partnerJWT, claims)
		if i%50 == 0 {
			tok = f.genuine(claims) // the sandbox's own key, a client it does not have
		}
		r := s.do(request{path: trialsPath, headers: bearer(tok), plain: true})
		if r.Status == http.StatusOK {
			t.Fatalf("forged token %d accepted", i)
		}
		if challenge := r.Header.Get("WWW-Authenticate"); len(challenge) > 512 {
			t.Fatalf("forged token %d: a %d-byte challenge echoes the claims", i, len(challenge))
		}
	}
	if n, err := sandbox.RateBucketCount(s.server); err != nil || n > 1 {
		t.Errorf("%d rate-limit buckets (%v) after %d forged identities, want at most 1 (the shared unverified one)", n, err, forgedIdentities)
	}
	var rule struct {
		Hits       int            `json:"hits"`
		ClientHits map[string]int `json:"clientHits"`
	}
	s.admin(http.MethodGet, "/__sandbox/scenarios/"+ruleID, nil).decode(t, &rule)
	if len(rule.ClientHits) != 1 || rule.Hits != 1 {
		t.Errorf("perClient rule has %d client counters and %d hits, want 1 and 1 (forgers are all nobody)", len(rule.ClientHits), rule.Hits)
	}
	var report conformance.Report
	s.admin(http.MethodGet, "/__sandbox/report", nil).decode(t, &report)
	var extra []string
	for _, c := range report.Clients {
		if !slices.Contains([]string{conformance.Unidentified, partner, noroles}, c.ClientID) { // newForgery fetched partner's and noroles' tokens
			extra = append(extra, c.ClientID)
		}
	}
	if len(extra) > 0 {
		t.Errorf("report has %d sections for clients that do not exist, such as %.40q", len(extra), extra[0])
	}
}

// TestTokenOfAnotherEnvironmentIs401: a production sandbox sharing the
// signing key refuses a development client's token, as the real service
// keeps separate credentials per environment.
func TestTokenOfAnotherEnvironmentIs401(t *testing.T) {
	t.Parallel()
	const prodClient = "prod-partner"
	dev := newSandbox(t)
	devToken := dev.token(partner)
	prod := newSandbox(t, withClients(referrals.EnvironmentProduction, func(clients []referrals.Client) []referrals.Client {
		return append(clients, referrals.Client{
			ClientID: prodClient, ClientSecret: prodClient + "-secret", Roles: []string{sandbox.RoleTrialsRead},
			Resources: []string{idp.DefaultResource}, Environment: referrals.EnvironmentProduction,
		})
	}))
	if r := prod.do(request{path: trialsPath, token: prod.token(prodClient)}); r.Status != http.StatusOK {
		t.Fatalf("production client on production: %d %s", r.Status, r.Body)
	}
	// The development token as issued (another address, so another issuer).
	r := prod.do(request{path: trialsPath, token: devToken, invalid: true})
	wantProblem(t, r, http.StatusUnauthorized, sandbox.ProblemTypeUnauthorized)
	if d := wantChallenge(t, r, "invalid_token")["error_description"]; !strings.Contains(d, string(idp.ReasonUnknownClient)) && !strings.Contains(d, string(idp.ReasonWrongIssuer)) {
		t.Errorf("development token on production refused with %q", d)
	}
	// Signed with the shared key for the production sandbox's own issuer
	// and audience: only the environment can refuse it.
	f := newForgery(t, dev)
	sameIssuer := f.genuine(f.with(map[string]any{"iss": prod.URL + "/" + idp.DefaultTenant + "/v2.0"}))
	r = prod.do(request{path: trialsPath, token: sameIssuer, invalid: true})
	wantProblem(t, r, http.StatusUnauthorized, sandbox.ProblemTypeUnauthorized)
	if d := wantChallenge(t, r, "invalid_token")["error_description"]; !strings.Contains(d, string(idp.ReasonUnknownClient)) || !strings.Contains(d, "production") {
		t.Errorf("a %s token for the production issuer: %q, want %q naming the environment", partner, d, idp.ReasonUnknownClient)
	}
	if entries := prod.journal(queryOf("clientId", partner)); len(entries) != 0 {
		t.Errorf("production journal attributes %d requests to the development client %s", len(entries), partner)
	}
}

// TestTokenRequestIdentity: on the token endpoint a request counts as a
// client only with that client's secret. A wrong secret for partner-2
// neither uses up a rule bound to partner-2 nor is journaled as partner-2;
// rules may still name an unregistered client_id, and made-up ids share one
// per-client counter.
func TestTokenRequestIdentity(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	bound := s.addRule(map[string]any{"endpoint": "token", "clientId": partner2, "status": 503, "times": 1})
	ghost := s.addRule(map[string]any{"endpoint": "token", "clientId": "ghost-app", "error": "invalid_client"})
	counted := s.addRule(map[string]any{"endpoint": "token", "status": 503, "after": 1000, "perClient": true})

	wrong := s.postToken(tokenForm(partner2, "guessed-secret", apiScope), nil)
	checkEntraError(t, wrong, http.StatusUnauthorized, idp.CodeInvalidClient)
	if rule := wrong.Header.Get(sandbox.RuleHeader); rule != "" {
		t.Errorf("a wrong secret for %s fired rule %s", partner2, rule)
	}
	if r := s.postToken(tokenForm(partner2, partner2+"-secret", apiScope), nil); r.Status != http.StatusServiceUnavailable || r.Header.Get(sandbox.RuleHeader) != bound {
		t.Errorf("%s with its secret: %d, rule %q; want the bound rule's 503", partner2, r.Status, r.Header.Get(sandbox.RuleHeader))
	}
	if r := s.postToken(tokenForm("ghost-app", "x", apiScope), nil); r.Header.Get(sandbox.RuleHeader) != ghost {
		t.Errorf("a rule naming an unregistered client_id did not fire: %d, rule %q", r.Status, r.Header.Get(sandbox.RuleHeader))
	}
	for i := range 50 {
		s.postToken(tokenForm(fmt.Sprint("made-up-", i), "x", apiScope), nil)
	}

	var rule struct {
		ClientHits map[string]int `json:"clientHits"`
		Matches    int            `json:"matches"`
	}
	s.admin(http.MethodGet, "/__sandbox/scenarios/"+counted, nil).decode(t, &rule)
	if rule.Matches < 50 || len(rule.ClientHits) > 3 {
		t.Errorf("perClient rule matched %d requests and keeps %d client counters, want ≥50 and at most 3 (partner-2, nobody, unregistered)", rule.Matches, len(rule.ClientHits))
	}
	for _, e := range s.journal(queryOf("clientId", partner2)) {
		if e.Status == http.StatusUnauthorized {
			t.Errorf("the wrong-secret token request is journaled as %s: %+v", partner2, e)
		}
	}
	for _, e := range s.journal(nil) {
		if strings.HasPrefix(e.ClientID, "made-up-") || e.ClientID == "ghost-app" {
			t.Errorf("a token request for an unregistered client_id is journaled as %q", e.ClientID)
			break
		}
	}
}

// TestReportNamesWhoSentATokenInTheURL: a token sent as ?code= or
// ?access_token= is redacted in the journal, yet the request belongs to the
// token's (verified) client, whose no-credentials-in-url check fails with
// both requests as evidence. A forged token in the URL names nobody.
func TestReportNamesWhoSentATokenInTheURL(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	f := newForgery(t, s)
	tok := s.token(partner2)
	ids := []string{"url-code", "url-access-token"}
	for i, query := range []string{"?code=", "?access_token="} {
		s.do(request{path: trialsPath + query + tok, headers: map[string]string{sandbox.RequestIDHeader: ids[i]}, plain: true})
	}
	s.do(request{path: trialsPath + "?code=" + f.forgedAs(partner2)[0], plain: true})
	if r := s.do(request{path: trialsPath, token: tok}); r.Status != http.StatusOK {
		t.Fatalf("%s: %d", partner2, r.Status)
	}
	var report conformance.Report
	s.admin(http.MethodGet, "/__sandbox/report?clientId="+partner2, nil).decode(t, &report)
	if len(report.Clients) != 1 {
		t.Fatalf("report for %s: %+v", partner2, report)
	}
	c := report.Clients[0]
	if c.Requests != 4 { // the token request, two URL tokens, one proper call
		t.Errorf("report judges %d requests of %s, want 4 (the forged one is not theirs)", c.Requests, partner2)
	}
	for _, check := range c.Checks {
		if check.ID != conformance.CheckNoCredentialsInURL {
			continue
		}
		if check.Result != conformance.Fail || !slices.Equal(check.Evidence, ids) {
			t.Errorf("%s: %s %v (%s), want fail with evidence %v", check.ID, check.Result, check.Evidence, check.Explanation, ids)
		}
		if !strings.Contains(check.Explanation, "code") || !strings.Contains(check.Explanation, "access_token") {
			t.Errorf("explanation %q does not name code and access_token", check.Explanation)
		}
		return
	}
	t.Errorf("no %s check in %+v", conformance.CheckNoCredentialsInURL, c)
}
