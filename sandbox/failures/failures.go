// Package failures decides and answers the failures a request is made to
// meet. A request's own X-Sandbox-* headers come first (decide.go), then
// the active failure rules of package scenarios. A firing rule may hold the
// answer back (within the caps of holds.go), break the connection, or
// answer with a forced status in the exact shape the real endpoint would
// use (forced.go). How a forced 503 is decided is this package, read top
// to bottom from Layer.Wrap.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package failures

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
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

// Config is what the failures layer needs, given explicitly.
type Config struct {
	// Rules are the active failure rules and the saved scenarios.
	Rules scenarios.Engine
	// Reply answers refusals and failures of the rules' state.
	Reply *reply.Replier
	// Clocks date the token endpoint's errors and the rate-limit headers.
	Clocks *clock.PerClient
	// RateLimits writes the RateLimit-* headers a real answer of the
	// client would carry on a forced one.
	RateLimits RateLimits
	// API answers the API's 401 and 403 in their own shape.
	API TokenRefusals
	// CheckRun refuses a malformed run label (X-Sandbox-Run, ?run=) as it
	// refuses a malformed X-Sandbox-* value.
	CheckRun func(*http.Request) error
	// MaxHeld and MaxHeldPerClient cap the requests delays and hangs hold
	// open at once, in total and per verified client; default
	// DefaultMaxHeld and DefaultMaxHeldPerClient.
	MaxHeld          int
	MaxHeldPerClient int
}

// RateLimits is the part of the rate limiter a forced answer needs.
type RateLimits interface {
	// ForcedHeaders writes clientID's RateLimit-* headers without
	// spending from its bucket; retryAfter > 0 says nothing is left.
	ForcedHeaders(ctx context.Context, w http.ResponseWriter, clientID string, now time.Time, retryAfter int)
}

// TokenRefusals are the API's answers to a refused bearer token.
type TokenRefusals interface {
	// RefuseToken answers 401 with an RFC 6750 challenge.
	RefuseToken(w http.ResponseWriter, r *http.Request, description, remedy string)
	// Forbid answers 403 with an insufficient_scope challenge naming role.
	Forbid(w http.ResponseWriter, r *http.Request, role string)
	// RetryRemedy is the advice for a refusal a new token cures.
	RetryRemedy() string
}

// Layer is the failures layer of a request's life.
type Layer struct {
	cfg   Config
	holds *holds
}

// New returns the layer cfg describes.
func New(cfg Config) *Layer {
	return &Layer{cfg: cfg, holds: newHolds(cfg.MaxHeld, cfg.MaxHeldPerClient)}
}

// Held reports how many requests delays and hangs hold now.
func (l *Layer) Held() int { return l.holds.held() }

// Wrap applies failure rules to token, API and ping requests before next:
// the per-request headers first, then the active rules.
func (l *Layer) Wrap(next exchange.HandlerFunc) exchange.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c exchange.Caller) exchange.Outcome {
		if c.Endpoint == "" {
			return next(w, r, c)
		}
		req := scenarios.Request{Method: r.Method, Path: r.URL.Path, ClientID: c.RuleClient, Unregistered: c.Unregistered, Endpoint: c.Endpoint}
		d, ok, err := l.perRequestDecision(r, req)
		if errors.Is(err, scenarios.ErrUnavailable) {
			// The saved scenarios cannot be read: the name may well be
			// saved, so the request gets the documented 503, never a
			// 400 calling it unknown.
			l.cfg.Reply.Fail(w, r, err)
			return exchange.Outcome{}
		}
		if err != nil {
			// A refused X-Sandbox-* value is still an API answer: it
			// carries the client's RateLimit-* headers like every other.
			if req.Endpoint == scenarios.EndpointAPI || req.Endpoint == scenarios.EndpointPing {
				l.cfg.RateLimits.ForcedHeaders(r.Context(), w, c.ClientID(), l.cfg.Clocks.Now(c.ClientID()), 0)
			}
			l.cfg.Reply.Refuse(w, r, err.Error())
			return exchange.Outcome{}
		}
		if !ok || d.Status == 0 && d.Fault == "" && d.Error == "" {
			// A per-request delay alone adds to what the active rules decide.
			ruled, fired, err := l.cfg.Rules.Decide(r.Context(), req)
			if err != nil {
				// The rules cannot be read: answering normally would skip a
				// failure the caller asked for, so the request gets the
				// documented 503 with Retry-After.
				l.cfg.Reply.Fail(w, r, err)
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
				release, refused := l.holds.acquire(c.ClientID())
				if refused != "" {
					l.RefuseHold(w, r, c, refused)
					return exchange.Outcome{}
				}
				defer release()
			}
		}
		return l.rule(w, r, c, d, next)
	}
}

// rule answers r as decision d says, and reports what it did: held back
// for d's delay, then a connection fault, a forced answer, or next's own
// answer.
func (l *Layer) rule(w http.ResponseWriter, r *http.Request, c exchange.Caller, d scenarios.Decision, next exchange.HandlerFunc) exchange.Outcome {
	out := exchange.Outcome{Ruling: exchange.Ruling{RuleID: d.RuleID, Scenario: d.Scenario, Delay: d.Delay}}
	if d.RuleID != "" {
		w.Header().Set(RuleHeader, d.RuleID)
	}
	if !l.sleep(r, d.Delay) {
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
		l.writeForced(w, r, c, d)
	default:
		inner := next(w, r, c)
		inner.Ruling = out.Ruling
		return inner
	}
	return out
}

// sleep waits d on the sandbox's behalf, unless the client gives up first.
func (l *Layer) sleep(r *http.Request, d time.Duration) bool {
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
