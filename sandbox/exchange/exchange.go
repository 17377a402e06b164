// Package exchange holds the values the layers of one request hand each
// other. Who the request counts as (Caller) is decided once, before any
// layer reads it, and passed down as an argument. What happened to the
// request (Outcome) is returned by each layer to the one outside it, which
// adds what it decided. The journal, the metrics and the traces are built
// from those values alone, so a layer's signature says what it may report,
// and nothing written outside the chain can be lost unseen.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package exchange

import (
	"net/http"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// Caller is who a request counts as, for failure rules, rate limits, the
// journal and the conformance report. It belongs to a client only on
// proof (see the root package's identify); it never changes once made.
type Caller struct {
	// Endpoint is the kind of request: token, api, ping, or "" for what
	// the sandbox adds, which rules and rate limits never touch.
	Endpoint scenarios.Endpoint
	// Claimed is the verified client and token, zero when unproven.
	Claimed idp.Claimed
	// RuleClient is the client id failure rules match; Unregistered marks
	// one that is not a registered client (a token request may name any).
	RuleClient   string
	Unregistered bool
	// Unverified marks a request whose credential the sandbox did not
	// issue: it shares one rate-limit bucket.
	Unverified bool
	// TokenErr is why the bearer token did not verify: authentication
	// answers with it instead of verifying the token a second time.
	TokenErr error
}

// ClientID is the verified client the request belongs to, or "".
func (c Caller) ClientID() string { return c.Claimed.ClientID }

// Ruling is what a failure rule or an X-Sandbox-* header did to a request.
type Ruling struct {
	// RuleID and Scenario name what fired; empty when nothing did.
	RuleID   string
	Scenario string
	// Fault is the connection fault applied, "" for none.
	Fault scenarios.Fault
	// Delay is how long the answer was held back.
	Delay time.Duration
	// HeldStatus and HeldHeader are the answer a drop-after-commit fault
	// kept from the client: the journal shows what was committed.
	HeldStatus int
	HeldHeader http.Header
}

// Outcome is what happened to a request, as the layers that decided it
// report it on the way out. Each field has one layer that sets it.
type Outcome struct {
	// Caller is who the request counted as (the journal's layer).
	Caller Caller
	// Operation is the template of the route that answered, "" when no
	// route did (the router).
	Operation string
	// Ruling is what the failure rules did (the rules' layer).
	Ruling Ruling
	// Upstream is the real service's answer (the recording proxy).
	Upstream *journal.Upstream
	// Verified is the token authentication accepted (the API's
	// authentication), zero when it accepted none.
	Verified idp.Claimed
	// Refusal is why authentication refused the bearer token.
	Refusal string
	// Submission identifies what a referral was submitted for (the API's
	// submissions), for the resubmits-safely check.
	Submission string
	// Aborted marks an answer a fault ended by aborting the handler
	// (panic(http.ErrAbortHandler) where the connection cannot be taken
	// over): the outermost layer aborts once every layer has seen it.
	Aborted bool
}

// Handler answers a request from a known caller and reports what happened.
type Handler interface {
	Answer(w http.ResponseWriter, r *http.Request, c Caller) Outcome
}

// HandlerFunc is a function as a Handler.
type HandlerFunc func(w http.ResponseWriter, r *http.Request, c Caller) Outcome

// Answer calls f.
func (f HandlerFunc) Answer(w http.ResponseWriter, r *http.Request, c Caller) Outcome {
	return f(w, r, c)
}

// Plain is an http.Handler as a Handler: one that reports nothing beyond
// its answer (the admin API, the documents, the identity provider).
type Plain struct{ http.Handler }

// Answer serves the request and reports nothing.
func (p Plain) Answer(w http.ResponseWriter, r *http.Request, _ Caller) Outcome {
	p.ServeHTTP(w, r)
	return Outcome{}
}

// Abortable runs answer, turning the abort net/http documents for ending a
// response without an answer (panic(http.ErrAbortHandler)) into a value,
// so the layers outside still see and record what happened. Any other
// panic goes on.
func Abortable(answer func()) (aborted bool) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler { //nolint:errorlint // net/http compares the value itself
				panic(v)
			}
			aborted = true
		}
	}()
	answer()
	return false
}
