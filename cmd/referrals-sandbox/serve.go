package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// DefaultAddr is where serve listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8080"

// serveConfig is every flag of serve.
type serveConfig struct {
	addr          string
	publicURL     string
	logFormat     string
	logLevel      string
	tenant        string
	environment   string
	tokenLifetime time.Duration
	signingKey    string
	fixturesDir   string
	dataFile      string
	scenarioNames []string
	scenariosDir  string
	rateLimit     float64
	rateBurst     int
	journalSize   int
	adminToken    string
	shutdownGrace time.Duration
}

func serveFlags(e env) (*options, *serveConfig) {
	c := &serveConfig{}
	o := newOptions("serve", "Start the sandbox: the identity provider, the referrals API and the admin API on one address.", e.getenv, e.stderr)
	o.String(&c.addr, "addr", DefaultAddr, "listen address; port 0 picks a free port")
	o.String(&c.publicURL, "public-url", "", "base URL clients reach the sandbox at, used in issuer and endpoint URLs (default: the URL of each request)")
	o.String(&c.logFormat, "log-format", "text", "log format: text or json")
	o.String(&c.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	o.String(&c.tenant, "tenant", idp.DefaultTenant, "tenant GUID in the identity provider's paths and tokens")
	o.String(&c.environment, "environment", fixtures.EnvironmentDevelopment, "environment the sandbox runs as: development or production (clients of the other do not exist)")
	o.Duration(&c.tokenLifetime, "token-lifetime", idp.DefaultTokenLifetime, "access token lifetime (a client's tokenLifetimeSeconds overrides it)")
	o.String(&c.signingKey, "signing-key", "", "PEM file with the RSA key that signs tokens (default: the embedded sandbox-only key)")
	o.String(&c.fixturesDir, "fixtures", "", "fixtures directory replacing the embedded defaults (clients.json and trials.json required)")
	o.String(&c.dataFile, "data", "", "buntdb file that keeps referrals across restarts (default: in memory); fixtures are loaded only into an empty store")
	o.List(&c.scenarioNames, "scenario", "named scenario (or a scenario JSON file) to activate at start; repeatable, comma-separated in the environment")
	o.String(&c.scenariosDir, "scenarios-dir", "", "directory of a team's own scenario JSON files, added to the embedded library")
	o.Float(&c.rateLimit, "rate-limit", sandbox.DefaultRateLimit, "requests per second per client on the API and ping; 0 turns limiting off")
	o.Int(&c.rateBurst, "rate-burst", sandbox.DefaultRateBurst, "burst size of each client's rate limit")
	o.Int(&c.journalSize, "journal-size", sandbox.DefaultJournalSize, "how many requests the request journal keeps")
	o.String(&c.adminToken, "admin-token", "", "bearer token the admin API requires (default: admin API open)")
	o.Duration(&c.shutdownGrace, "shutdown-grace", 10*time.Second, "how long SIGTERM waits for requests in flight")
	return o, c
}

func runServe(ctx context.Context, e env, args []string) error {
	o, c := serveFlags(e)
	if err := o.parse(args); err != nil {
		return err
	}
	logger, err := newLogger(e.stderr, c.logFormat, c.logLevel)
	if err != nil {
		return err
	}
	if c.environment != fixtures.EnvironmentDevelopment && c.environment != fixtures.EnvironmentProduction {
		return fmt.Errorf("%w: --environment must be development or production, not %q", errUsage, c.environment)
	}
	set, embedded, err := loadFixtures(c.fixturesDir)
	if err != nil {
		return err
	}
	keyPEM := fixtures.DefaultSigningKeyPEM()
	if c.signingKey != "" {
		if keyPEM, err = os.ReadFile(c.signingKey); err != nil {
			return fmt.Errorf("--signing-key: %w", err)
		}
	}
	keys, err := idp.LoadKeys(keyPEM)
	if err != nil {
		return fmt.Errorf("--signing-key: %w", err)
	}
	clk := clock.NewAdjustable(nil)
	provider, err := idp.New(idp.Config{
		Tenant: c.tenant, Environment: c.environment, Clients: set.Clients,
		TokenLifetime: c.tokenLifetime, Keys: keys, PublicURL: c.publicURL, Clock: clk, Logger: logger,
	})
	if err != nil {
		return err
	}
	st, err := openStore(c.dataFile)
	if err != nil {
		return err
	}
	defer func() {
		if err := st.Close(); err != nil {
			logger.Error("close store", "err", err)
		}
	}()
	library, engine, err := loadScenarios(c, clk)
	if err != nil {
		return err
	}
	srv, err := sandbox.New(sandbox.Config{
		Provider: provider, Fixtures: set, Clock: clk, Logger: logger, Store: st,
		Library: library, Scenarios: engine, JournalSize: c.journalSize,
		RateLimit: c.rateLimit, RateBurst: c.rateBurst, AdminToken: c.adminToken,
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.addr, err)
	}
	base := c.publicURL
	if base == "" {
		base = "http://" + advertisedHost(ln.Addr().(*net.TCPAddr))
	}
	base = strings.TrimRight(base, "/")
	var ids []string
	for _, cl := range provider.Clients() {
		ids = append(ids, cl.ClientID)
	}
	logger.Info("referrals-sandbox ready",
		"addr", ln.Addr().String(),
		"auth_url", provider.AuthURL(base),
		"token_url", provider.TokenURL(base),
		"base_url", base+"/api/v1",
		"root_url", base,
		"environment", c.environment,
		"clients", strings.Join(ids, ","))
	if embedded {
		printDefaultCredentials(e.stdout, provider.Clients())
	}

	httpServer := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- httpServer.Serve(ln) }()
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "grace", c.shutdownGrace.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), c.shutdownGrace)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// loadScenarios builds the scenario library (embedded, plus --scenarios-dir)
// and activates the --scenario names. A --scenario that is a file path is
// added to the library first.
func loadScenarios(c *serveConfig, clk clock.Clock) (*scenarios.Library, *scenarios.Engine, error) {
	if c.journalSize < 1 || c.rateLimit < 0 || c.rateBurst < 0 {
		return nil, nil, fmt.Errorf("%w: --journal-size must be at least 1, --rate-limit and --rate-burst not negative", errUsage)
	}
	library, err := scenarios.LoadLibrary()
	if err != nil {
		return nil, nil, err
	}
	if c.scenariosDir != "" {
		if err := library.AddDir(c.scenariosDir); err != nil {
			return nil, nil, fmt.Errorf("--scenarios-dir: %w", err)
		}
	}
	engine := scenarios.New(scenarios.Config{Library: library, Clock: clk})
	for _, name := range c.scenarioNames {
		if strings.HasSuffix(name, ".json") {
			sc, err := library.AddFile(name)
			if err != nil {
				return nil, nil, fmt.Errorf("--scenario %s: %w", name, err)
			}
			name = sc.Name
		}
		if _, err := engine.Activate(name, ""); err != nil {
			return nil, nil, fmt.Errorf("--scenario: %w (known: %s)", err, strings.Join(library.Names(), ", "))
		}
	}
	return library, engine, nil
}

// openStore opens the --data file, or an in-memory store without one.
func openStore(path string) (*store.BuntStore, error) {
	if path == "" {
		path = ":memory:"
	}
	st, err := store.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--data %s: %w", path, err)
	}
	return st, nil
}

func loadFixtures(dir string) (set *fixtures.Set, embedded bool, err error) {
	if dir == "" {
		set, err = fixtures.Default()
		return set, true, err
	}
	set, err = fixtures.LoadDir(dir)
	return set, false, err
}

// advertisedHost is the host:port a local client uses: a wildcard listen
// address is reached at 127.0.0.1.
func advertisedHost(a *net.TCPAddr) string {
	ip := a.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(a.Port))
}

// printDefaultCredentials shows the embedded clients on stdout, apart from the
// log stream. Only the embedded defaults are printed: their secrets are
// published in the README; a custom fixtures directory's secrets never are.
func printDefaultCredentials(w io.Writer, clients []fixtures.Client) {
	fmt.Fprintln(w, "Default sandbox credentials (public test values, embedded in the binary):")
	for _, c := range clients {
		fmt.Fprintf(w, "  client_id=%-20s client_secret=%-27s %s\n", c.ClientID, c.ClientSecret, c.Description)
	}
	fmt.Fprintf(w, "  scope=%s/.default\n", idp.DefaultResource)
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", errUsage, level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("%w: --log-format %q: want text or json", errUsage, format)
}
