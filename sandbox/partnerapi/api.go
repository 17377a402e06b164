// Package partnerapi is the referrals API partners build against: its
// routes' operations, the reading and validation of their bodies, the
// bearer-token check with the API's roles, its listings and, under
// --contract, the shapes a supplied OpenAPI document gives its records.
// The root's route table registers each operation behind the layers every
// request passes (journal, failures, rate limit); an operation returns
// what the journal must know of it (the token it accepted, what was
// submitted) as an exchange.Outcome.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package partnerapi

import (
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/lifecycle"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// Config is what the partner API needs, given explicitly.
type Config struct {
	// Backend holds the records the API stores and reads; its clocks are
	// the API's only handle on time.
	Backend *backend.Backend
	// Provider verifies the bearer tokens the API is called with.
	Provider *idp.Provider
	// Reply answers refusals and failures.
	Reply *reply.Replier
	// Logger receives what a problem body does not explain.
	Logger *slog.Logger
	// Trials are the fixtures' trials, which referrals name.
	Trials []referrals.Trial
	// Contract, when set, replaces the built-in shapes of the referral
	// operations it describes differently (contract_shapes.go).
	Contract *contractdoc.Contract
	// Lifecycle applies the personas' due moves when a qualified referral
	// is read.
	Lifecycle lifecycle.Settler
}

// API is the partner API, built once by New and never changed after.
type API struct {
	provider  *idp.Provider
	backend   *backend.Backend
	reply     *reply.Replier
	log       *slog.Logger
	clocks    *clock.PerClient
	trials    []referrals.Trial
	lifecycle lifecycle.Settler
	// trialsJSON is the trials listing, encoded once: it never changes.
	trialsJSON []byte
	// audience and audienceID are what the API's tokens are for: its App
	// ID URI (v1.0 tokens) and its application id (v2.0 tokens).
	audience   string
	audienceID string
	// ownIssuer is the provider's OwnIssuer, taken once: a method value
	// taken per request is an allocation per request.
	ownIssuer func(iss string) bool
	// lastIssuers caches the issuers of the last base URL (see issuers).
	lastIssuers atomic.Pointer[baseIssuers]
	contract    contractShapes
	// pages recycles the buffers listings are written from.
	pages pageBuffers
}

// New returns the partner API cfg describes.
func New(cfg Config) (*API, error) {
	switch {
	case cfg.Backend == nil:
		return nil, errors.New("partner API: no backend")
	case cfg.Provider == nil:
		return nil, errors.New("partner API: no identity provider")
	case cfg.Reply == nil || cfg.Logger == nil:
		return nil, errors.New("partner API: no replier or logger")
	}
	trialsJSON, err := encodeTrialsList(cfg.Trials)
	if err != nil {
		return nil, err
	}
	a := &API{
		provider: cfg.Provider, backend: cfg.Backend, reply: cfg.Reply, log: cfg.Logger, clocks: cfg.Backend.ClientClocks,
		trials: cfg.Trials, lifecycle: cfg.Lifecycle, trialsJSON: trialsJSON,
		audience: idp.DefaultResource, audienceID: idp.ApplicationID(idp.DefaultResource),
		ownIssuer: cfg.Provider.OwnIssuer,
	}
	if cfg.Contract != nil {
		a.contract = newContractShapes(cfg.Contract)
	}
	return a, nil
}
