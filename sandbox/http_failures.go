package sandbox

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// Per-request switches a client (or QA) sends to force a failure on one
// request only.
const (
	ForceStatusHeader = "X-Sandbox-Force-Status"
	DelayHeader       = "X-Sandbox-Delay"
	ScenarioHeader    = "X-Sandbox-Scenario"
	// RuleHeader names the rule that forced a response, for QA reading a
	// trace; real clients ignore it.
	RuleHeader = "Sandbox-Rule"
)

// withScenarios applies failure rules to token, API and ping requests: the
// per-request headers first, then the active rules. A firing rule may delay,
// break the connection, or answer with a forced status in the exact shape the
// real endpoint would use.
func (s *Server) withScenarios(next exchange.HandlerFunc) exchange.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c exchange.Caller) exchange.Outcome {
		if c.Endpoint == "" {
			return next(w, r, c)
		}
		req := scenarios.Request{Method: r.Method, Path: r.URL.Path, ClientID: c.RuleClient, Unregistered: c.Unregistered, Endpoint: c.Endpoint}
		d, ok, err := s.perRequestDecision(r, req)
		if errors.Is(err, scenarios.ErrUnavailable) {
			// The saved scenarios cannot be read: the name may well be
			// saved, so the request gets the documented 503, never a
			// 400 calling it unknown.
			s.reply.Fail(w, r, err)
			return exchange.Outcome{}
		}
		if err != nil {
			// A refused X-Sandbox-* value is still an API answer: it
			// carries the client's RateLimit-* headers like every other.
			if req.Endpoint == scenarios.EndpointAPI || req.Endpoint == scenarios.EndpointPing {
				s.limiter.forcedHeaders(r.Context(), w, c.ClientID(), s.clocks.Now(c.ClientID()), 0)
			}
			s.refuseRequest(w, r, err.Error())
			return exchange.Outcome{}
		}
		if !ok || d.Status == 0 && d.Fault == "" && d.Error == "" {
			// A per-request delay alone adds to what the active rules decide.
			ruled, fired, err := s.backend.Rules.Decide(r.Context(), req)
			if err != nil {
				// The rules cannot be read: answering normally would skip a
				// failure the caller asked for, so the request gets the
				// documented 503 with Retry-After.
				s.reply.Fail(w, r, err)
				return exchange.Outcome{}
			}
			if fired {
				ruled.Delay += d.Delay
				d, ok = ruled, true
			}
		}
		if !ok {
			return next(w, r, c)
		}
		if holdsConnection(d) {
			if c.ClientID() == "" {
				d = withoutHold(d) // nobody the sandbox knows may hold a connection
			} else {
				release, refused := s.holds.acquire(c.ClientID())
				if refused != "" {
					s.refuseHold(w, r, c, refused)
					return exchange.Outcome{}
				}
				defer release()
			}
		}
		return s.rule(w, r, c, d, next)
	}
}

// rule answers r as decision d says, and reports what it did: held back
// for d's delay, then a connection fault, a forced answer, or next's own
// answer.
func (s *Server) rule(w http.ResponseWriter, r *http.Request, c exchange.Caller, d scenarios.Decision, next exchange.HandlerFunc) exchange.Outcome {
	out := exchange.Outcome{Ruling: exchange.Ruling{RuleID: d.RuleID, Scenario: d.Scenario, Delay: d.Delay}}
	if d.RuleID != "" {
		w.Header().Set(RuleHeader, d.RuleID)
	}
	if !s.sleep(r, d.Delay) {
		return out // the client gave up during the delay
	}
	switch {
	case d.Fault == scenarios.FaultDropAfterCommit:
		var answered exchange.Outcome
		served := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { answered = next(w, r, c) })
		ruling := out.Ruling
		ruling.Fault = d.Fault
		out.Aborted = exchange.Abortable(func() {
			scenarios.DropAfterCommit(w, r, served, func(status int, header http.Header) {
				ruling.HeldStatus, ruling.HeldHeader = status, header
			})
		})
		answered.Ruling, answered.Aborted = ruling, out.Aborted
		return answered
	case d.Fault != "":
		out.Ruling.Fault = d.Fault
		out.Aborted = exchange.Abortable(func() { scenarios.ApplyFault(w, r, d.Fault) })
	case d.Status != 0:
		s.writeForced(w, r, c, d)
	default:
		inner := next(w, r, c)
		inner.Ruling = out.Ruling
		return inner
	}
	return out
}

// perRequestDecision reads the X-Sandbox-* headers. An unknown value is an
// error listing the allowed ones: a typo must never pass silently.
func (s *Server) perRequestDecision(r *http.Request, req scenarios.Request) (scenarios.Decision, bool, error) {
	var d scenarios.Decision
	found := false
	if err := checkRun(r); err != nil {
		return d, false, err
	}
	if name := r.Header.Get(ScenarioHeader); name != "" {
		sd, matched, err := s.backend.Rules.DecideScenario(r.Context(), name, req)
		if err != nil {
			return d, false, fmt.Errorf("%s: %w", ScenarioHeader, err)
		}
		if matched {
			d, found = sd, true
		}
	}
	if v := r.Header.Get(ForceStatusHeader); v != "" {
		status, code, err := forcedValue(v, req.Endpoint)
		if err != nil {
			return d, false, err
		}
		d.Status, d.Error, d.Fault, d.RuleID, d.Scenario = status, code, "", ForceStatusHeader, ""
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			d.RetryAfter = scenarios.DefaultRetryAfter
		}
		found = true
	}
	if v := r.Header.Get(DelayHeader); v != "" {
		delay, err := scenarios.ParseDelay(v)
		if err != nil {
			return d, false, fmt.Errorf("%s: %w", DelayHeader, err)
		}
		d.Delay += delay
		if d.RuleID == "" {
			d.RuleID = DelayHeader
		}
		found = true
	}
	return d, found, nil
}

// forcedValue parses X-Sandbox-Force-Status: a status the endpoint can give,
// or on the token endpoint one of its error codes.
func forcedValue(v string, endpoint scenarios.Endpoint) (status int, code string, err error) {
	allowedStatuses := scenarios.ForcibleStatuses(endpoint)
	allowedErrors := scenarios.ForcibleErrors(endpoint)
	if n, convErr := strconv.Atoi(v); convErr == nil {
		for _, a := range allowedStatuses {
			if a == n {
				return n, "", nil
			}
		}
	}
	for _, a := range allowedErrors {
		if a == v {
			return scenarios.ErrorStatus(a), a, nil
		}
	}
	allowed := make([]string, 0, len(allowedStatuses)+len(allowedErrors))
	for _, a := range allowedStatuses {
		allowed = append(allowed, strconv.Itoa(a))
	}
	allowed = append(allowed, allowedErrors...)
	return 0, "", fmt.Errorf("%s: %q cannot be forced on the %s endpoint; allowed: %s", ForceStatusHeader, v, endpoint, strings.Join(allowed, ", "))
}

// sleep waits d on the sandbox's behalf, unless the client gives up first.
func (s *Server) sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// writeForced answers with a forced failure in the endpoint's own shape.
func (s *Server) writeForced(w http.ResponseWriter, r *http.Request, c exchange.Caller, d scenarios.Decision) {
	endpoint := c.Endpoint
	if d.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(d.RetryAfter)))
	}
	if endpoint == scenarios.EndpointToken && d.Status == http.StatusTooManyRequests {
		idp.WriteThrottled(w, r)
		return
	}
	if endpoint == scenarios.EndpointToken {
		e, ok := idp.ForcedTokenError(d.Error, d.Status)
		if !ok {
			e, _ = idp.ForcedTokenError("", http.StatusServiceUnavailable)
		}
		idp.WriteTokenError(w, r, s.clocks.Now(""), e)
		return
	}
	if d.Status != http.StatusTooManyRequests {
		s.limiter.forcedHeaders(r.Context(), w, c.ClientID(), s.clocks.Now(c.ClientID()), 0)
	}
	switch d.Status {
	case http.StatusUnauthorized:
		reason := d.Reason
		if reason == "" {
			reason = "invalid"
		}
		s.refuseToken(w, r, "access token "+reason+" (forced by sandbox rule "+d.RuleID+")", retryRemedy)
	case http.StatusForbidden:
		s.forbid(w, r, "required for this operation (permissions revoked by sandbox rule "+d.RuleID+")")
	case http.StatusTooManyRequests:
		seconds := retryAfterSeconds(d.RetryAfter)
		s.limiter.forcedHeaders(r.Context(), w, c.ClientID(), s.clocks.Now(""), seconds)
		s.reply.Problem(w, r, reply.New(d.Status, fmt.Sprintf("rate limit exceeded; retry after %d second(s)", seconds)))
	case http.StatusServiceUnavailable:
		s.reply.Problem(w, r, reply.New(d.Status, "the service is temporarily unavailable; retry after the Retry-After delay"))
	default:
		s.reply.Problem(w, r, reply.New(d.Status, "the service failed to process the request"))
	}
}

// retryAfterSeconds rounds up to whole seconds, at least one.
func retryAfterSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
