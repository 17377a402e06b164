// Package admin is the sandbox's admin API under /__sandbox/: failure
// scenarios and their library, the clock, reset, runtime clients, record
// statuses, the request journal (as JSON and as a HAR), the conformance
// report, the personas, the QA console's data, and the guard that keeps
// other sites' pages and rebound Host names away from all of it.
//
// It is given everything it needs in one Config: the backend, the identity
// provider, how to answer, and, as function values or narrow interfaces,
// the few things the root package owns (the rate limiter, the partner
// API's strict reading of bodies and queries, the contract's record
// shapes, the route table's 405). The root package imports admin, never
// the reverse.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package admin

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/logthrottle"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/lifecycle"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// RateLimits is what the admin API needs of the root's rate limiter: a
// reset refills every bucket, and a client's reset or deletion drops its
// own. The limiter stays in the root, where it also limits the API.
type RateLimits interface {
	// Reset refills every client's bucket.
	Reset(ctx context.Context) error
	// Forget drops clientID's bucket.
	Forget(ctx context.Context, clientID string) error
}

// Shapes render stored records as their partner reads them under
// --contract; a nil function (or a nil map returned) means the record is
// answered as stored. The root owns the contract's shapes, which also
// shape the API's answers.
type Shapes struct {
	// Referral renders a trial referral.
	Referral func(referrals.Referral) (map[string]any, error)
	// Qualified renders a qualified referral.
	Qualified func(referrals.QualifiedReferral) (map[string]any, error)
}

// Handle registers path on r with a handler per method; the root's route
// table answers other methods with 405 and Allow, so every route of the
// sandbox refuses a method the same way.
type Handle func(r *mux.Router, path string, byMethod map[string]http.Handler)

// Config is everything the admin API needs, given explicitly.
type Config struct {
	// Backend holds the state the admin API reads and changes.
	Backend *backend.Backend
	// Provider is the identity provider whose clients the admin API lists,
	// creates and deletes.
	Provider *idp.Provider
	// Replier answers problems and the state's failures as every flow does.
	Replier *reply.Replier
	// Logger receives what the admin API changed, never secrets.
	Logger *slog.Logger
	// Records are the fixtures' records, as the store keeps them, that a
	// reset restores.
	Records *store.EncodedSet
	// Trials are the fixtures' trials, every one, for the console and for
	// finding a referral by any id of its trial.
	Trials []referrals.Trial
	// Audience is the resource a runtime client gets when it names none.
	Audience string
	// PartnerRoles are the roles a runtime client gets when it names none:
	// every permission of the API, like the fixtures' sandbox-partner.
	PartnerRoles []string
	// Token, when set, is the bearer token every admin call needs
	// (--admin-token).
	Token string
	// AllowedHosts are the host names, besides loopback ones and the
	// address a connection arrives on, that the admin API answers to.
	AllowedHosts []string
	// HTTPSOnly says the sandbox serves only HTTPS, which the conformance
	// report credits to every client.
	HTTPSOnly bool
	// Version names this build in the HAR's creator.
	Version string
	// RequestIDHeader and RuleHeader name the headers the root's chain
	// sets, which the HAR lists among an answer's headers.
	RequestIDHeader, RuleHeader string
	// RateLimits is the root's rate limiter.
	RateLimits RateLimits
	// Decode reads r's JSON body into into (a pointer) as the partner API
	// reads its submissions, so that a malformed body gets the same answer
	// on both: what is not JSON or too large is a reply.RequestError; it
	// returns the unknown fields and the known ones that hold null,
	// invalid UTF-8 or NUL.
	Decode func(r *http.Request, into any) (unknown []string, invalid []reply.FieldError, err error)
	// Shapes are the contract's record shapes.
	Shapes Shapes
	// Handle is the root's route table's way of registering a path.
	Handle Handle
}

// API is the admin API: its routes (Routes), the check every admin call
// passes (Only) and the guard in front of every path under /__sandbox/
// (Guard).
type API struct {
	cfg     Config
	backend *backend.Backend
	clocks  *clock.PerClient
	log     *slog.Logger
	reply   *reply.Replier
	hosts   hostPolicy
	// lifecycle applies the personas' due moves before the console shows
	// a qualified referral, as the API does before a partner reads one.
	lifecycle lifecycle.Settler
	// refusals keeps refused callers from flooding the log (real time:
	// logs are read in real time, whatever the sandbox clock says).
	refusals *logthrottle.Throttle
}

// New builds the admin API from cfg, refusing a Config that lacks a part
// every call needs, or names an allowed host that is not one.
func New(cfg Config) (*API, error) {
	switch {
	case cfg.Backend == nil:
		return nil, errors.New("admin: no backend")
	case cfg.Provider == nil:
		return nil, errors.New("admin: no identity provider")
	case cfg.Replier == nil || cfg.Replier.Redactor == nil || cfg.Logger == nil:
		return nil, errors.New("admin: no replier or logger")
	case cfg.Records == nil:
		return nil, errors.New("admin: no fixture records to reset to")
	case cfg.RateLimits == nil:
		return nil, errors.New("admin: no rate limits")
	case cfg.Decode == nil:
		return nil, errors.New("admin: no request reader")
	case cfg.Handle == nil:
		return nil, errors.New("admin: no route table")
	}
	hosts, err := newHostPolicy(cfg.AllowedHosts)
	if err != nil {
		return nil, err
	}
	return &API{
		cfg: cfg, backend: cfg.Backend, clocks: cfg.Backend.ClientClocks, log: cfg.Logger, reply: cfg.Replier, hosts: hosts,
		lifecycle: lifecycle.Settler{Records: cfg.Backend.Records, Clocks: cfg.Backend.ClientClocks},
		refusals:  logthrottle.New(time.Second, time.Now),
	}, nil
}
