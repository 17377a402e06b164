package sandboxtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// Rule is a failure rule: which requests it matches, what the sandbox
// answers them instead, and how often. It is the body of POST
// /__sandbox/scenarios; docs/failure-scenarios.md and
// the admin API's OpenAPI document (GET /__sandbox/openapi.json) describe
// every field. Zero fields are left out: they match everything, or take the
// sandbox's default.
type Rule struct {
	// ID names the rule; the sandbox assigns one when it is empty.
	ID string `json:"id,omitempty"`
	// Description is free text, shown in the admin API and the console.
	Description string `json:"description,omitempty"`
	// Scenario is the named scenario the rule came from. The sandbox sets
	// it; AddRule ignores it.
	Scenario string `json:"scenario,omitempty"`

	// Method matches the HTTP method, case-insensitively.
	Method string `json:"method,omitempty"`
	// Path matches the request path exactly, with "*" standing for one
	// whole segment, e.g. /api/v1/referrals/*.
	Path string `json:"path,omitempty"`
	// ClientID matches only this client's requests.
	ClientID string `json:"clientId,omitempty"`
	// Endpoint matches one kind of request; empty is EndpointAny.
	Endpoint Endpoint `json:"endpoint,omitempty"`

	// Status is the HTTP status to answer, with the service's error body
	// (e.g. 503 with Retry-After). Status, Error and Fault exclude each
	// other.
	Status int `json:"status,omitempty"`
	// Error is the token endpoint's error code to answer, e.g.
	// invalid_client (token endpoint only).
	Error string `json:"error,omitempty"`
	// RetryAfterSeconds is the Retry-After of a 429 or 503; default 1.
	RetryAfterSeconds int `json:"retryAfterSeconds,omitempty"`
	// Reason goes into the error description, e.g. "expired" for a 401.
	Reason string `json:"reason,omitempty"`
	// Delay is latency added before the answer, forced or not.
	Delay *Delay `json:"delay,omitempty"`
	// Fault breaks the connection instead of answering; empty answers
	// normally. The Fault constants list the faults the sandbox knows.
	Fault Fault `json:"fault,omitempty"`

	// Times fires the rule on the next Times matches, then retires it;
	// 0 fires it until it is removed.
	Times int `json:"times,omitempty"`
	// After lets the first After matches through before the rule fires.
	After int `json:"after,omitempty"`
	// Probability is the chance of firing on a match; 0 means always.
	Probability float64 `json:"probability,omitempty"`
	// Seed seeds the draws of Probability and Delay, so a run repeats.
	Seed uint64 `json:"seed,omitempty"`
	// PerClient counts Times and After for each client apart.
	PerClient bool `json:"perClient,omitempty"`
}

// Endpoint is the kind of request a Rule matches.
type Endpoint string

// The kinds of request a Rule can match.
const (
	EndpointToken   Endpoint = "token"   // POST {AuthURL}/oauth2/v2.0/token
	EndpointAPI     Endpoint = "api"     // everything under BaseURL
	EndpointPing    Endpoint = "ping"    // GET {RootURL}/health/ping
	EndpointService Endpoint = "service" // the API and its ping: an outage of the service
	EndpointAny     Endpoint = "any"     // all three
)

// Fault is how a Rule breaks the connection instead of answering, as
// docs/failure-scenarios.md describes.
type Fault string

// The faults a Rule can force.
const (
	// FaultReset resets the connection (TCP RST): the client sees
	// ECONNRESET.
	FaultReset Fault = "reset"
	// FaultEmpty closes the connection without an answer: the client sees
	// EOF.
	FaultEmpty Fault = "empty"
	// FaultHang holds the request without answering until the client
	// gives up.
	FaultHang Fault = "hang"
	// FaultMalformed answers 200 with a truncated JSON body that no
	// decoder accepts.
	FaultMalformed Fault = "malformed"
	// FaultDropAfterCommit lets the sandbox handle the request and store
	// its result (a referral created, a token issued), then resets the
	// connection instead of answering: the write happened, but the client
	// cannot know it did.
	FaultDropAfterCommit Fault = "drop-after-commit"
)

// Delay is latency a Rule adds. Use exactly one form: Fixed; Min and Max
// (uniform between them); or Median and Sigma (lognormal, capped at Max,
// the usual shape of real network latency).
type Delay struct {
	// Fixed is the delay of the fixed form.
	Fixed time.Duration
	// Min and Max bound the uniform form; Max also caps the lognormal
	// one (default 30s). No delay exceeds one minute.
	Min time.Duration
	Max time.Duration
	// Median and Sigma shape the lognormal form: Median*exp(Sigma*N(0,1)).
	Median time.Duration
	Sigma  float64
}

// delayJSON is Delay as the admin API writes it: durations as strings
// such as "250ms".
type delayJSON struct {
	Fixed  string  `json:"fixed,omitempty"`
	Min    string  `json:"min,omitempty"`
	Max    string  `json:"max,omitempty"`
	Median string  `json:"median,omitempty"`
	Sigma  float64 `json:"sigma,omitempty"`
}

// MarshalJSON writes d as the admin API takes it.
func (d Delay) MarshalJSON() ([]byte, error) {
	str := func(v time.Duration) string {
		if v == 0 {
			return ""
		}
		return v.String()
	}
	return json.Marshal(delayJSON{Fixed: str(d.Fixed), Min: str(d.Min), Max: str(d.Max), Median: str(d.Median), Sigma: d.Sigma})
}

// UnmarshalJSON reads d as the admin API writes it.
func (d *Delay) UnmarshalJSON(b []byte) error {
	var raw delayJSON
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	parsed := Delay{Sigma: raw.Sigma}
	for _, f := range []struct {
		from string
		to   *time.Duration
	}{{raw.Fixed, &parsed.Fixed}, {raw.Min, &parsed.Min}, {raw.Max, &parsed.Max}, {raw.Median, &parsed.Median}} {
		if f.from == "" {
			continue
		}
		v, err := time.ParseDuration(f.from)
		if err != nil {
			return fmt.Errorf("delay: %w", err)
		}
		*f.to = v
	}
	*d = parsed
	return nil
}

// RuleStatus is a rule as the sandbox holds it: the rule, with its id, and
// what it has done so far.
type RuleStatus struct {
	Rule
	// Matches counts the requests the rule matched, fired or not.
	Matches int `json:"matches"`
	// Hits counts the requests the rule fired on.
	Hits int `json:"hits"`
	// Remaining is how many more times the rule fires before it retires;
	// nil when unlimited or counted per client.
	Remaining *int `json:"remaining,omitempty"`
	// ClientHits counts hits per client id, for a PerClient rule.
	ClientHits map[string]int `json:"clientHits,omitempty"`
	// AddedAt is when the rule was added, in sandbox time.
	AddedAt time.Time `json:"addedAt"`
	// LastFiredAt is when it last fired; nil if it never has.
	LastFiredAt *time.Time `json:"lastFiredAt,omitempty"`
}

// AddRule adds one failure rule and returns it as the sandbox holds it:
// with its id, and counters that start at zero. A rule the sandbox refuses
// fails the test with the sandbox's reason, naming the field at fault.
func (s *Sandbox) AddRule(t testing.TB, rule Rule) RuleStatus {
	t.Helper()
	added, err := s.AddRuleContext(context.Background(), rule)
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	return added
}

// AddRuleContext is AddRule without a test: a refusal is an error.
func (s *Sandbox) AddRuleContext(ctx context.Context, rule Rule) (RuleStatus, error) {
	var added RuleStatus
	if err := s.admin(ctx, http.MethodPost, "/__sandbox/scenarios", rule, http.StatusCreated, &added); err != nil {
		return RuleStatus{}, fmt.Errorf("add rule: %w", err)
	}
	return added, nil
}

// ApplyScenario activates the named scenario of the sandbox's library
// (e.g. token-expired, rate-limited; GET /__sandbox/library lists them),
// bound to clientID, or for every client when clientID is empty.
func (s *Sandbox) ApplyScenario(t testing.TB, name, clientID string) {
	t.Helper()
	if err := s.ApplyScenarioContext(context.Background(), name, clientID); err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
}

// ApplyScenarioContext is ApplyScenario without a test: an unknown name is
// an error listing the known ones.
func (s *Sandbox) ApplyScenarioContext(ctx context.Context, name, clientID string) error {
	body := map[string]string{"clientId": clientID}
	if err := s.admin(ctx, http.MethodPost, "/__sandbox/library/"+url.PathEscape(name), body, http.StatusCreated, nil); err != nil {
		return fmt.Errorf("apply scenario %s: %w", name, err)
	}
	return nil
}

// SaveScenario saves rules as a named scenario in the sandbox's library
// (POST /__sandbox/library), to activate later with ApplyScenario. In
// shared mode saved scenarios outlive restarts: delete what a test saved
// (DeleteScenario, or t.Cleanup) so a team sandbox does not fill up.
func (s *Sandbox) SaveScenario(t testing.TB, name, description string, rules []Rule) {
	t.Helper()
	if err := s.SaveScenarioContext(context.Background(), name, description, rules); err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
}

// SaveScenarioContext is SaveScenario without a test: a taken name or an
// invalid rule is an error.
func (s *Sandbox) SaveScenarioContext(ctx context.Context, name, description string, rules []Rule) error {
	body := map[string]any{"name": name, "description": description, "rules": rules}
	if err := s.admin(ctx, http.MethodPost, "/__sandbox/library", body, http.StatusCreated, nil); err != nil {
		return fmt.Errorf("save scenario %s: %w", name, err)
	}
	return nil
}

// DeleteScenario deletes a scenario saved with SaveScenario (or POST
// /__sandbox/library), switching it off first wherever it is active.
func (s *Sandbox) DeleteScenario(t testing.TB, name string) {
	t.Helper()
	if err := s.DeleteScenarioContext(context.Background(), name); err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
}

// DeleteScenarioContext is DeleteScenario without a test: an unknown name,
// or one that comes with the sandbox, is an error.
func (s *Sandbox) DeleteScenarioContext(ctx context.Context, name string) error {
	if err := s.admin(ctx, http.MethodDelete, "/__sandbox/library/saved/"+url.PathEscape(name), nil, http.StatusNoContent, nil); err != nil {
		return fmt.Errorf("delete scenario %s: %w", name, err)
	}
	return nil
}
