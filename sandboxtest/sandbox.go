package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// shutdownGrace is how long Close lets requests in flight finish before it
// cuts their connections (a "hang" scenario would otherwise hold it up).
const shutdownGrace = 2 * time.Second

// Sandbox is a running sandbox and the addresses and credentials a client
// under test needs. Its fields are set once by StartServer; read them
// freely. Its methods are safe for concurrent use by parallel tests.
type Sandbox struct {
	// RootURL is the scheme, host and port, e.g. https://127.0.0.1:40123;
	// health, ping and the admin API hang off it.
	RootURL string
	// URL is RootURL, under the name httptest.Server uses.
	URL string
	// AuthURL is RootURL plus the tenant: the authority MSAL and azidentity
	// take, and the auth_url of the interface document.
	AuthURL string
	// TokenURL is the client-credentials token endpoint under AuthURL.
	TokenURL string
	// BaseURL is RootURL plus /api/v1, the referrals API's base_url.
	BaseURL string
	// Tenant is the tenant GUID in AuthURL and in every token.
	Tenant string
	// CACertPEM is the CA certificate the sandbox's TLS certificate chains
	// to (PEM); nil for plain HTTP. Client already trusts it; a client
	// built some other way (another language, a subprocess) needs it.
	CACertPEM []byte
	// DefaultCredentials are the first client of the fixtures: with the
	// embedded fixtures, sandbox-partner, which holds every permission.
	// Credentials gives any other fixture client's.
	DefaultCredentials Credentials

	instance   *sandbox.Instance
	server     *http.Server
	served     chan error
	httpClient *http.Client
	adminToken string
	closeOnce  sync.Once
	closeErr   error
}

// Start runs a sandbox for the test t and stops it when the test ends. A
// sandbox that cannot start fails the test at once. It is StartServer with
// the test's cleanup.
func Start(t testing.TB, opts ...Option) *Sandbox {
	t.Helper()
	sb, err := StartServer(opts...)
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("sandboxtest: %v", err)
		}
	})
	return sb
}

// StartServer runs a sandbox on a free port of 127.0.0.1 until Close. Start
// is the usual way in a test; StartServer serves where there is no
// testing.TB, such as a TestMain that shares one sandbox between the
// package's tests, an Example or a local tool. A sandbox that cannot start
// (an unknown scenario, fixtures that do not load) is an error naming why.
func StartServer(opts ...Option) (*Sandbox, error) {
	var c config
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	options := c.sandbox
	if options.Logger == nil {
		options.Logger = slog.New(slog.DiscardHandler)
	}
	in, err := sandbox.Open(options)
	if err != nil {
		return nil, fmt.Errorf("open sandbox: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("listen on loopback: %w", err), in.Close())
	}
	addr := ln.Addr().String()
	scheme := "http"
	if in.TLS != nil {
		scheme = "https"
		ln = sandbox.NewTLSListener(ln, in.TLS.Clone(), nil)
	}
	var routed []string
	if options.TLS {
		routed = options.TLSHosts
	}
	client, err := newHTTPClient(addr, in.CACertPEM, routed)
	if err != nil {
		return nil, errors.Join(err, ln.Close(), in.Close())
	}
	root := scheme + "://" + addr
	sb := &Sandbox{
		RootURL:            root,
		URL:                root,
		AuthURL:            in.Provider.AuthURL(root),
		TokenURL:           in.Provider.TokenURL(root),
		BaseURL:            root + "/api/v1",
		Tenant:             in.Provider.Tenant(),
		CACertPEM:          in.CACertPEM,
		DefaultCredentials: defaultCredentials(in.Provider.Clients()),
		instance:           in,
		server: &http.Server{
			Handler:           in.Server,
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(options.Logger.Handler(), slog.LevelWarn),
		},
		served:     make(chan error, 1),
		httpClient: client,
		adminToken: options.AdminToken,
	}
	go func() { sb.served <- sb.server.Serve(ln) }()
	return sb, nil
}

// Close stops the server, giving requests in flight a moment to finish, and
// releases the store. Calling it again does nothing.
func (s *Sandbox) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Sandbox) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var errs []error
	if err := s.server.Shutdown(ctx); err != nil {
		// Requests still running after the grace period: cut them off.
		if cerr := s.server.Close(); cerr != nil {
			errs = append(errs, fmt.Errorf("close server: %w", cerr))
		}
	}
	if err := <-s.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, fmt.Errorf("serve: %w", err))
	}
	s.httpClient.CloseIdleConnections()
	if err := s.instance.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close store: %w", err))
	}
	return errors.Join(errs...)
}

// Now is the sandbox clock's time: real time until AdvanceClock moves it
// (a client's own clock, moved by AdvanceClientClock, may differ). Compare
// it with the timestamps the sandbox stamps on records.
func (s *Sandbox) Now() time.Time { return s.instance.Clock.Now() }

// Client returns the HTTP client to reach the sandbox with, as
// httptest.Server.Client does: it trusts the sandbox's CA, ignores proxy
// settings (the sandbox is on loopback) and dials the sandbox for the
// extra host names given to WithTLS. Every call returns the same client;
// Close closes its idle connections.
func (s *Sandbox) Client() *http.Client { return s.httpClient }
