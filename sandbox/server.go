// Package sandbox is the referrals API and everything the sandbox adds under
// /__sandbox/: it routes the identity provider, the API, the health check and
// the admin API through one middleware chain (request id, journal, failure
// scenarios, rate limiting, authentication).
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package sandbox

import (
	"context"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/admin"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/documents"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/failures"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/lifecycle"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/metrics"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/partnerapi"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/recording"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"

	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gorilla/mux"
	"go.opentelemetry.io/otel/trace"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// parts are what Open builds from a Config for the server: each built
// once, none changed by the server.
type parts struct {
	// Provider is the identity provider the API trusts.
	Provider *idp.Provider
	// Logger receives request and lifecycle logs, never secrets.
	Logger *slog.Logger
	// Backend is where the sandbox keeps its state: in this process or,
	// in shared mode, in Redis (package backend). Its clocks are the
	// sandbox's only handle on time.
	Backend *backend.Backend
	// RateLimit is each client's requests per second on the API and ping;
	// 0 turns limiting off. RateBurst is the bucket size.
	RateLimit float64
	RateBurst int
	// AdminToken, when set, protects the admin API.
	AdminToken string
	// AllowedHosts are the host names, besides loopback ones and the
	// address a connection arrives on, that the admin API answers to (see
	// admin.API.Guard).
	AllowedHosts []string
	// CACertPEM, when set, is served at /__sandbox/ca.pem.
	CACertPEM []byte
	// HTTPSOnly answers requests that arrive over plain HTTP with a 400
	// (they are still journaled, for the conformance report): the sandbox
	// serves --tls, as the real service serves only HTTPS.
	HTTPSOnly bool
	// MaxHeld and MaxHeldPerClient cap the requests delays and hangs hold
	// open at once, in total and per verified client; default
	// DefaultMaxHeld and DefaultMaxHeldPerClient (package failures).
	MaxHeld          int
	MaxHeldPerClient int
	// Contract, when set, replaces the built-in shapes of the referral
	// operations it describes differently (package partnerapi, contract_shapes.go).
	Contract *contractdoc.Contract
	// Upstream, when set, makes the sandbox a recording proxy in front of
	// the real service (upstream.go).
	Upstream *UpstreamConfig
	// Build names this build in referrals_sandbox_build_info.
	Build BuildInfo
	// TracerProvider, when set, gives each partner request a span
	// (http_tracing.go); nil traces nothing.
	TracerProvider trace.TracerProvider
}

// DefaultJournalSize is how many requests the journal keeps by default.
const DefaultJournalSize = backend.DefaultJournalSize

// DefaultQuotaRecords and DefaultQuotaBytes are serve's store quota per
// client (--quota-records, --quota-bytes): far above what a test suite
// stores, low enough that a runaway loop fills its own client's quota
// long before the sandbox's memory (see docs/security.md). Config's zero
// Quota is no bound.
const (
	DefaultQuotaRecords       = 10_000
	DefaultQuotaBytes   int64 = 32 << 20
)

// DefaultJournalBytes and MinJournalBytes bound the journal's byte budget
// (--journal-bytes).
const (
	DefaultJournalBytes = journal.DefaultMaxBytes
	MinJournalBytes     = journal.MinMaxBytes
)

// Server is the whole sandbox as an http.Handler.
type Server struct {
	cfg parts
	// clocks are the sandbox clock and the clients' own: the backend's.
	clocks *clock.PerClient
	// trials are the fixtures' trials, the only part of the fixtures
	// read after start: the records are in records, the clients in the
	// provider.
	trials []referrals.Trial
	// records are the fixtures' records, as the store keeps them, to reset
	// the store to.
	records *store.EncodedSet
	log     *slog.Logger
	backend *backend.Backend
	limiter *rateLimiter
	// api is the partner API (package partnerapi).
	api    *partnerapi.API
	serve  layer
	router *mux.Router           // the routes, for the metrics' operation label
	exact  map[string]exactRoute // routes served without the router
	// cleanPaths are the exact routes' paths that redaction leaves as they
	// are (see journalPath).
	cleanPaths map[string]bool
	metrics    *metrics.Metrics
	// redactor hides credentials, by name and by value, in journal entries
	// and log lines (the identity provider's, so both use one).
	redactor *redact.Redactor
	// failures decides and answers the failures requests are made to meet.
	failures *failures.Layer
	// upstream forwards partner calls to the real service; nil unless
	// Config.Upstream.
	upstream *recording.Proxy
	// admin is the admin API under /__sandbox/ (package admin).
	admin *admin.API
	// reply writes problems and answers the state's failures.
	reply *reply.Replier
}

// newServer builds the server from cfg, seeding its backend from set when
// its record store is empty. The server keeps set's trials, not set: its
// decoded records may be dropped once newServer returns.
func newServer(cfg parts, set *fixtures.Set) (*Server, error) {
	switch {
	case cfg.Provider == nil:
		return nil, errors.New("sandbox: no identity provider")
	case set == nil:
		return nil, errors.New("sandbox: no fixtures")
	case cfg.Backend == nil:
		return nil, errors.New("sandbox: no backend")
	case cfg.Logger == nil:
		return nil, errors.New("sandbox: no logger")
	}
	// The provider keeps runtime clients in the backend and judges each
	// client's tokens on that client's clock.
	if err := cfg.Backend.Bind(context.Background(), cfg.Provider); err != nil {
		return nil, err
	}
	clocks := cfg.Backend.ClientClocks
	redactor := cfg.Provider.Redactor()
	replier := &reply.Replier{Log: cfg.Logger, Redactor: redactor, Clocks: clocks}
	settler := lifecycle.Settler{Records: cfg.Backend.Records, Clocks: clocks}
	api, err := partnerapi.New(partnerapi.Config{
		Backend: cfg.Backend, Provider: cfg.Provider, Reply: replier, Logger: cfg.Logger,
		Trials: set.Trials, Contract: cfg.Contract, Lifecycle: settler,
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := api.CheckFixtures(set); err != nil {
		return nil, err
	}
	records, err := store.EncodeSet(set)
	if err != nil {
		return nil, fmt.Errorf("load fixtures into the store: %w", err)
	}
	if err := seed(context.Background(), cfg.Backend.Records, records); err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, clocks: clocks, trials: set.Trials, records: records, log: cfg.Logger, backend: cfg.Backend,
		limiter:  newRateLimiter(cfg.Provider, cfg.RateLimit, cfg.RateBurst, cfg.Backend.Buckets),
		redactor: redactor, reply: replier, api: api,
	}
	if s.upstream, err = recording.New(cfg.Upstream, cfg.Contract, s.redactor, s.log); err != nil {
		return nil, err
	}
	s.failures = failures.New(failures.Config{
		Rules: s.backend.Rules, Reply: s.reply, Clocks: clocks, RateLimits: s.limiter, API: api,
		CheckRun: checkRun, MaxHeld: cfg.MaxHeld, MaxHeldPerClient: cfg.MaxHeldPerClient,
	})
	s.metrics = metrics.New(cfg.Build, s.backend.Journal)
	if s.admin, err = s.newAdmin(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s.serve = s.routes()
	return s, nil
}

// ServeHTTP serves every sandbox route. A fault that had to abort the
// answer (where the connection cannot be taken over) aborts it here, once
// every layer has recorded it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.serve(w, r).Aborted {
		panic(http.ErrAbortHandler)
	}
}

func (s *Server) routes() layer {
	// Never clean or redirect, match ids as encoded: see request/paths.go.
	r := mux.NewRouter().SkipClean(true).UseEncodedPath()
	s.router = r
	get := func(role string, h partnerapi.Handler) apiMethods {
		return apiMethods{http.MethodGet: s.api.Authenticated(role, partnerapi.Reads(h))}
	}

	s.handle(r, "/__sandbox/health", methods{http.MethodGet: http.HandlerFunc(s.serveHealth)})
	docs := documents.New(documents.Config{Provider: s.cfg.Provider, Contract: s.cfg.Contract, CACertPEM: s.cfg.CACertPEM, Reply: s.reply})
	if docs.HasCA() {
		s.handle(r, caPath, methods{http.MethodGet: http.HandlerFunc(docs.CA)})
	}
	s.handle(r, "/api/v1/openapi.json", methods{http.MethodGet: http.HandlerFunc(docs.API)})
	s.handle(r, openapi.AdminPath, methods{http.MethodGet: http.HandlerFunc(docs.Admin)})
	s.handleAPI(r, "/health/ping", get(partnerapi.RoleAny, s.api.Ping))
	s.handleAPI(r, "/api/v1/referrals/trials", get(RoleTrialsRead, s.api.Trials))
	referrals := apiMethods{
		http.MethodGet:  s.api.Authenticated(RoleReferralsRead, partnerapi.Reads(s.api.ListReferrals)),
		http.MethodPost: s.api.Authenticated(RoleReferralsWrite, s.api.CreateReferral),
	}
	// Both spellings answer directly: a redirect would turn a POST into a GET.
	s.handleAPI(r, "/api/v1/referrals", referrals)
	s.handleAPI(r, "/api/v1/referrals/", referrals)
	s.handleAPI(r, "/api/v1/referrals/qualified", apiMethods{
		http.MethodGet:  s.api.Authenticated(RoleQualifiedReferralsRead, partnerapi.Reads(s.api.ListQualified)),
		http.MethodPost: s.api.Authenticated(RoleQualifiedReferralsWrite, s.api.CreateQualified),
	})
	s.handleAPI(r, "/api/v1/referrals/qualified/{external_source_id}", get(RoleQualifiedReferralsRead, s.api.GetQualified))
	s.handleAPI(r, "/api/v1/referrals/qualified/{external_source_id}/audit-trail", get(RoleQualifiedReferralsRead, s.api.QualifiedAuditTrail))
	s.handleAPI(r, "/api/v1/referrals/{trial_id}/{outcomes_id}", get(RoleReferralsRead, s.api.GetReferral))
	s.admin.Routes(r)
	s.handle(r, MetricsPath, methods{http.MethodGet: s.admin.Only(s.serveMetrics)})
	s.cfg.Provider.Register(r)
	s.exact = exactRoutes(r)
	s.cleanPaths = cleanPaths(s.exact, s.redactor)
	// A request's life, outermost first. Every response gets a request
	// id; a span (with a TracerProvider) and the metrics read what the
	// layers inside report; the metrics count every answer, refusals
	// included. The journal's layer decides who the caller is and hands it
	// to every layer inside, so it sees the final answer, forced ones and
	// 429s included.
	return withRequestID(s.withTracing(s.withMetrics(s.withShared(s.withAdminGuard(
		s.withJournal(s.withHTTPSOnly(s.failures.Wrap(s.withUpstream(s.withRateLimit(s.serveRoutes))))))))))
}

// serveHealth answers the unauthenticated health check used by CI and
// container health checks. It touches nothing that can block.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	reply.SetJSONContentType(w.Header())
	w.Header().Set("Cache-Control", "no-store")
	if s.degraded(w, r) {
		return
	}
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}
