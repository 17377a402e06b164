// Package sandbox is the referrals API and everything the sandbox adds under
// /__sandbox/: it routes the identity provider, the API, the health check and
// the admin API through one middleware chain (request id, journal, failure
// scenarios, rate limiting, authentication).
package sandbox

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// Config injects the sandbox's parts. Provider, Fixtures, Clock and Logger
// are required.
type Config struct {
	// Provider is the identity provider the API trusts.
	Provider *idp.Provider
	// Fixtures is the data the store is seeded with and reset to.
	Fixtures *fixtures.Set
	// Clock is the one sandbox clock; the admin API moves it.
	Clock *clock.Adjustable
	// Logger receives request and lifecycle logs, never secrets.
	Logger *slog.Logger
}

// Server is the whole sandbox as an http.Handler.
type Server struct {
	cfg     Config
	log     *slog.Logger
	handler http.Handler
}

// New checks cfg and builds the server.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Provider == nil:
		return nil, errors.New("sandbox: no identity provider")
	case cfg.Fixtures == nil:
		return nil, errors.New("sandbox: no fixtures")
	case cfg.Clock == nil:
		return nil, errors.New("sandbox: no clock")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: cfg.Logger}
	s.handler = s.routes()
	return s, nil
}

// ServeHTTP serves every sandbox route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func (s *Server) routes() http.Handler {
	r := mux.NewRouter()
	r.Handle("/__sandbox/health", http.HandlerFunc(s.serveHealth)).Methods(http.MethodGet, http.MethodHead)
	s.cfg.Provider.Register(r)
	return withRequestID(r)
}

// serveHealth answers the unauthenticated health check used by CI and
// container health checks. It touches nothing that can block.
func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}
