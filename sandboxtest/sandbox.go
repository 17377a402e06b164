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

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// shutdownGrace is how long Close lets requests in flight finish before it
// cuts their connections (a "hang" scenario would otherwise hold it up).
const shutdownGrace = 2 * time.Second

// Sandbox is a running sandbox and the addresses and credentials a client
// under test needs. Its fields are set once by StartServer; read them freely.
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
	// to; nil for plain HTTP (or a certificate file given with WithOptions).
	CACertPEM []byte
	// Credentials are the first client of the fixtures: with the embedded
	// fixtures, sandbox-partner, which holds every permission.
	Credentials Credentials

	instance   *sandbox.Instance
	server     *http.Server
	served     chan error
	httpClient *http.Client
	adminToken string
	closeOnce  sync.Once
	closeErr   error
}

// Start runs a sandbox for the test t and stops it when the test ends. A
// sandbox that cannot start fails the test at once.
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
// testing.TB, such as an Example or a TestMain.
func StartServer(opts ...Option) (*Sandbox, error) {
	options := sandbox.Options{Logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		if opt != nil {
			opt(&options)
		}
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
		RootURL:     root,
		URL:         root,
		AuthURL:     in.Provider.AuthURL(root),
		TokenURL:    in.Provider.TokenURL(root),
		BaseURL:     root + "/api/v1",
		Tenant:      in.Provider.Tenant(),
		CACertPEM:   in.CACertPEM,
		Credentials: defaultCredentials(in.Provider.Clients()),
		instance:    in,
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

// Clock is the sandbox clock. AdvanceClock moves it through the admin API,
// as a partner's own tooling would; Clock is for reading it, or for moving
// it without a request.
func (s *Sandbox) Clock() *clock.Adjustable { return s.instance.Clock }

// HTTPClient returns the client to reach the sandbox with: it trusts the
// sandbox's CA, ignores proxy settings (the sandbox is on loopback) and
// dials the sandbox for the extra host names given to WithTLS. Every call
// returns the same client; Close closes its idle connections.
func (s *Sandbox) HTTPClient() *http.Client { return s.httpClient }
