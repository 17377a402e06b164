package drift

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/brianvoe/gofakeit/v7"
)

// Credentials are a client's client-credentials grant: what a partner is
// issued, or the sandbox's own test client.
type Credentials struct {
	ClientID     string
	ClientSecret string
	Scope        string
}

// Target is one side of the comparison: the upstream or a sandbox.
type Target struct {
	// Name is "upstream" or "sandbox"; it appears in skip reasons.
	Name string
	// RootURL is {root_url}; the API is under RootURL/api/v1.
	RootURL string
	// AuthURL is {auth_url}; the token endpoint is AuthURL/oauth2/v2.0/token.
	AuthURL     string
	Credentials Credentials
	// OtherAudience asks for a token this API must refuse, one for another
	// audience (for the upstream, the partner's client with another scope);
	// a zero value, or a refusal, skips those probes.
	OtherAudience Credentials
	// ExpiredToken, when set, returns a token of Credentials that has
	// expired; without it the expired-token probes are skipped (a real
	// identity provider offers no way to get one short of waiting an hour).
	ExpiredToken func(context.Context) (string, error)
}

// Config is one drift run.
type Config struct {
	Upstream, Sandbox Target
	// WritesTrial, when set, adds the write probes: synthetic submissions
	// to this trial (on the sandbox, to the same trial if it has it, else
	// its first), read back, and the documented validation failures.
	WritesTrial string
	// MaxRPS bounds requests a second to each side (default DefaultMaxRPS).
	MaxRPS float64
	// Timeout bounds each request (default DefaultTimeout).
	Timeout time.Duration
	// Transport sends the requests (default http.DefaultTransport).
	Transport http.RoundTripper
	Allow     AllowList
	// Wait waits out Retry-After and backoff; nil waits in real time.
	Wait func(context.Context, time.Duration) error
	// Faker generates the synthetic patients (default a random seed).
	Faker *gofakeit.Faker
}

// side is one target during a run: its pacer and what the probes learned.
type side struct {
	target                           Target
	pacer                            *pacer
	token                            string
	otherAudience, otherAudienceSkip string
	expired, expiredSkip             string
	trials                           []string
	writeTrial                       string
	createdTrial, createdOutcome     string
	createdExternal                  string
}

func (s *side) rootURL() string { return strings.TrimRight(s.target.RootURL, "/") }
func (s *side) baseURL() string { return s.rootURL() + "/api/v1" }
func (s *side) tokenURL() string {
	return strings.TrimRight(s.target.AuthURL, "/") + "/oauth2/v2.0/token"
}

// tokenURLOfTenant is the token endpoint of another tenant on the same
// identity provider: AuthURL with its last path segment (the tenant)
// replaced, or a reason to skip when AuthURL names no tenant.
func (s *side) tokenURLOfTenant(tenant string) (string, string) {
	auth := strings.TrimRight(s.target.AuthURL, "/")
	u, err := url.Parse(auth)
	if err != nil || strings.Trim(u.Path, "/") == "" {
		return "", "the auth URL names no tenant"
	}
	return auth[:strings.LastIndexByte(auth, '/')] + "/" + tenant + "/oauth2/v2.0/token", ""
}

// ErrRefused is returned when a side refuses the credentials drift was
// given, so no authenticated probe could run.
var ErrRefused = errors.New("credentials refused")

// Run sends every probe to both sides and returns the differences. An
// error means the comparison could not be made (a side unreachable, the
// credentials refused, the write trial unknown): exit status 2, not 1.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	client := &http.Client{
		Transport: cfg.Transport,
		Timeout:   cfg.Timeout,
		// A redirect is an answer to compare, not one to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	up := &side{target: cfg.Upstream, pacer: newPacer(cfg.Upstream.Name, cfg.Upstream.RootURL, client, cfg.MaxRPS, cfg.Wait)}
	sb := &side{target: cfg.Sandbox, pacer: newPacer(cfg.Sandbox.Name, cfg.Sandbox.RootURL, client, cfg.MaxRPS, cfg.Wait)}
	r := &runner{cfg: cfg, up: up, sb: sb, report: &Report{
		Upstream: cfg.Upstream.RootURL, Sandbox: cfg.Sandbox.RootURL,
		Differences: []Difference{}, Allowed: []Difference{}, Probes: []ProbeResult{}, Skipped: []ProbeResult{},
	}}
	err := r.run(ctx)
	r.report.Requests = []RequestSummary{up.summary(), sb.summary()}
	for _, s := range []*side{up, sb} {
		t := s.target
		r.report.secrets = append(r.report.secrets, t.Credentials.ClientSecret, t.OtherAudience.ClientSecret, s.token, s.otherAudience, s.expired)
	}
	return r.report, err
}

func (s *side) summary() RequestSummary {
	sum := s.pacer.report()
	for _, t := range []string{s.token, s.otherAudience, s.expired} {
		if t != "" {
			sum.Tokens++
		}
	}
	return sum
}

type runner struct {
	cfg    Config
	up, sb *side
	report *Report
}

func (r *runner) run(ctx context.Context) error {
	tokens := tokenProbes()
	if err := r.probe(ctx, tokens[0]); err != nil {
		return err
	}
	for _, s := range []*side{r.up, r.sb} {
		if s.token == "" {
			return fmt.Errorf("%w: the %s's token endpoint (%s) gave no access token; check the client id, secret and scope", ErrRefused, s.target.Name, s.tokenURL())
		}
		if err := r.extraTokens(ctx, s); err != nil {
			return err
		}
	}
	probes := append(tokens[1:], readProbes()...)
	for _, p := range probes {
		if err := r.probe(ctx, p); err != nil {
			return err
		}
	}
	if r.cfg.WritesTrial == "" {
		return nil
	}
	if err := r.chooseWriteTrials(); err != nil {
		return err
	}
	for _, p := range writeProbes(r.cfg.Faker) {
		if err := r.probe(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// extraTokens gets the tokens the bad-token probes need: one for another
// audience, and an expired one where the side lets one be had.
func (r *runner) extraTokens(ctx context.Context, s *side) error {
	s.otherAudienceSkip = fmt.Sprintf("no credentials for another audience were given for the %s", s.target.Name)
	if oa := s.target.OtherAudience; oa.ClientID != "" {
		a, err := s.pacer.do(ctx, formRequest(s, tokenForm(oa, nil)))
		if err != nil {
			return err
		}
		if s.otherAudience = accessToken(a); s.otherAudience != "" {
			s.otherAudienceSkip = ""
		} else {
			s.otherAudienceSkip = fmt.Sprintf("the %s gave no token for another audience (scope %s: status %d, error %s)", s.target.Name, oa.Scope, a.status, entraError(a.body))
		}
	}
	s.expiredSkip = fmt.Sprintf("the %s offers no expired token short of waiting out a token's lifetime", s.target.Name)
	if s.target.ExpiredToken != nil {
		t, err := s.target.ExpiredToken(ctx)
		if err != nil {
			return fmt.Errorf("expired token from the %s: %w", s.target.Name, err)
		}
		s.expired, s.expiredSkip = t, ""
	}
	return nil
}

// chooseWriteTrials picks the trial each side's submissions go to.
func (r *runner) chooseWriteTrials() error {
	trial := r.cfg.WritesTrial
	if !slices.Contains(r.up.trials, trial) {
		return fmt.Errorf("--writes: trial %q is not in the upstream's trials list (%s)", trial, strings.Join(r.up.trials, ", "))
	}
	r.up.writeTrial = trial
	switch {
	case slices.Contains(r.sb.trials, trial):
		r.sb.writeTrial = trial
	case len(r.sb.trials) > 0:
		r.sb.writeTrial = r.sb.trials[0]
	default:
		return fmt.Errorf("--writes: the sandbox lists no trial to submit to")
	}
	return nil
}

// probe sends p to both sides and records the differences, or why it was
// skipped.
func (r *runner) probe(ctx context.Context, p probe) error {
	ureq, uskip := p.build(r.up)
	sreq, sskip := p.build(r.sb)
	result := ProbeResult{Name: p.name, Request: describe(ureq)}
	if result.Request == "" {
		result.Request = describe(sreq)
	}
	if uskip != "" || sskip != "" {
		var reasons []string
		for _, reason := range []string{uskip, sskip} {
			if reason != "" && !slices.Contains(reasons, reason) {
				reasons = append(reasons, reason)
			}
		}
		result.Reason = strings.Join(reasons, "; ")
		r.report.Skipped = append(r.report.Skipped, result)
		return nil
	}
	ua, err := r.up.pacer.do(ctx, ureq)
	if err != nil {
		return fmt.Errorf("upstream, probe %s: %w", p.name, err)
	}
	sa, err := r.sb.pacer.do(ctx, sreq)
	if err != nil {
		return fmt.Errorf("sandbox, probe %s: %w", p.name, err)
	}
	for _, pair := range []struct {
		s *side
		a answer
	}{{r.up, ua}, {r.sb, sa}} {
		learn(p, pair.s, pair.a)
	}
	result.UpstreamStatus, result.SandboxStatus = ua.status, sa.status
	for _, d := range compareAnswers(p, ua, sa) {
		if reason := r.cfg.Allow.reason(d); reason != "" {
			d.Allowed = reason
			r.report.Allowed = append(r.report.Allowed, d)
			continue
		}
		result.Differences++
		r.report.Differences = append(r.report.Differences, d)
	}
	r.report.Probes = append(r.report.Probes, result)
	return nil
}

// learn keeps what later probes need from an answer.
func learn(p probe, s *side, a answer) {
	switch p.name {
	case "token":
		s.token = accessToken(a)
	case "trials-list":
		s.trials = trialIDs(a)
	}
	if p.after != nil {
		p.after(s, a)
	}
}

func accessToken(a answer) string {
	if a.status != http.StatusOK {
		return ""
	}
	var t tokenResponse
	if json.Unmarshal(a.body, &t) != nil {
		return ""
	}
	return t.AccessToken
}

// trialIDs reads a trials list: every trialId and altTrialId.
func trialIDs(a answer) []string {
	var list struct {
		Trials []struct {
			TrialID    string `json:"trialId"`
			AltTrialID string `json:"altTrialId"`
		} `json:"trials"`
	}
	if a.status != http.StatusOK || json.Unmarshal(a.body, &list) != nil {
		return nil
	}
	var ids []string
	for _, t := range list.Trials {
		ids = append(ids, t.TrialID)
		if t.AltTrialID != "" && t.AltTrialID != t.TrialID {
			ids = append(ids, t.AltTrialID)
		}
	}
	return ids
}

// describe is a request's method and path, as the report shows it.
func describe(r request) string {
	if r.method == "" {
		return ""
	}
	u, err := url.Parse(r.url)
	if err != nil {
		return r.method
	}
	return r.method + " " + u.RequestURI()
}

// ExpiredBy returns a Target.ExpiredToken that gets a token of creds from
// authURL and then calls expire, which must make that token expired (for
// a sandbox in the same process: move the client's clock past its
// lifetime).
func ExpiredBy(authURL string, creds Credentials, expire func()) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		s := &side{target: Target{AuthURL: authURL}}
		r := formRequest(s, tokenForm(creds, nil))
		req, err := http.NewRequestWithContext(ctx, r.method, r.url, strings.NewReader(string(r.body)))
		if err != nil {
			return "", err
		}
		req.Header = r.header
		client := &http.Client{Timeout: DefaultTimeout}
		resp, err := client.Do(req)
		if err != nil {
			return "", fmt.Errorf("token for %s: %w", creds.ClientID, err)
		}
		defer resp.Body.Close()
		var t tokenResponse
		if err := json.NewDecoder(resp.Body).Decode(&t); err != nil || t.AccessToken == "" {
			return "", fmt.Errorf("token for %s: status %d and no access token", creds.ClientID, resp.StatusCode)
		}
		expire()
		return t.AccessToken, nil
	}
}

// withDefaults fills what cfg leaves unset: the pace, the timeout, the
// transport and the faker that names synthetic patients.
func (cfg Config) withDefaults() Config {
	if cfg.MaxRPS <= 0 {
		cfg.MaxRPS = DefaultMaxRPS
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport
	}
	if cfg.Faker == nil {
		cfg.Faker = gofakeit.New(0)
	}
	return cfg
}
