package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tlsca"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tracing"
)

// DefaultAddr is where serve listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8080"

// serveConfig is every flag of serve.
type serveConfig struct {
	addr          string
	logFormat     string
	logLevel      string
	shutdownGrace time.Duration
	healthFile    string
	metricsAddr   string
	tokenVersion  string
	opts          sandbox.Config
	// upstream and upstreamAuth make serve a recording proxy.
	upstream, upstreamAuth string
	// upstreamKeep lists members and headers whose values a recording keeps.
	upstreamKeep []string
	// https and caDir: without --tls, the port answers HTTPS too, with a
	// certificate from the CA kept in caDir ("" the user's config dir).
	https bool
	caDir string
	// otlpEndpoint is where spans go (see package tracing).
	otlpEndpoint string
}

func serveFlags(e env) (*options, *serveConfig) {
	c := &serveConfig{}
	o := newOptions("serve", "Start the sandbox: the identity provider, the referrals API and the admin API on one address.", e.getenv, e.stdout)
	addServeFlags(o, c)
	return o, c
}

// addServeFlags declares serve's flags; healthcheck reuses them to find the
// address serve would listen on under the same environment.
func addServeFlags(o *options, c *serveConfig) {
	so := &c.opts
	o.String(&c.addr, "addr", DefaultAddr, "listen address; port 0 picks a free port")
	o.String(&so.PublicURL, "public-url", "", "base URL clients reach the sandbox at, used in issuer and endpoint URLs (default: the URL of each request)")
	o.String(&c.logFormat, "log-format", "text", "log format: text or json")
	o.String(&c.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	o.String(&so.Tenant, "tenant", idp.DefaultTenant, "tenant GUID in the identity provider's paths and tokens")
	o.String(&so.Environment, "environment", referrals.EnvironmentDevelopment, "environment the sandbox runs as: development or production (clients of the other do not exist)")
	o.Duration(&so.TokenLifetime, "token-lifetime", idp.DefaultTokenLifetime, "access token lifetime (a client's tokenLifetimeSeconds overrides it)")
	o.String(&c.tokenVersion, "token-version", "2", "access-token format: 2 (Entra's v2.0: aud the API's application id) or 1 (Entra's v1.0, what an API registration gets by default: aud the App ID URI, iss {base}/{tenant}/)")
	o.Duration(&so.ClockSkew, "clock-skew", 0, "leeway on token expiry and not-before for the API (the sandbox issues and checks tokens on one clock, so none by default)")
	o.String(&so.SigningKeyFile, "signing-key", "", "PEM file with the RSA key that signs tokens (default: the embedded sandbox-only key)")
	o.String(&so.FixturesDir, "fixtures", "", "fixtures directory replacing the embedded defaults (clients.json and trials.json required)")
	o.String(&so.DataFile, "data", "", "buntdb file that keeps referrals across restarts (default: in memory); fixtures are loaded only into an empty store")
	o.List(&so.ScenarioNames, "scenario", "named scenario (or a scenario JSON file) to activate at start; repeatable, comma-separated in the environment")
	o.String(&so.ScenariosDir, "scenarios-dir", "", "directory of a team's own scenario JSON files, added to the embedded library")
	o.Float(&so.RateLimit, "rate-limit", sandbox.DefaultRateLimit, "requests per second per client on the API and ping; 0 turns limiting off")
	o.Int(&so.RateBurst, "rate-burst", sandbox.DefaultRateBurst, "burst size of each client's rate limit")
	o.Int(&so.JournalSize, "journal-size", sandbox.DefaultJournalSize, "how many requests the request journal keeps")
	o.Int64(&so.JournalBytes, "journal-bytes", sandbox.DefaultJournalBytes, "byte budget of the request journal: the oldest requests are dropped beyond it (at least 1048576)")
	o.Int(&so.Quota.Records, "quota-records", sandbox.DefaultQuotaRecords, "records (referrals and qualified referrals) each client may store; a create beyond it is answered 507 and stores nothing; 0 for no bound")
	o.Int64(&so.Quota.Bytes, "quota-bytes", sandbox.DefaultQuotaBytes, "bytes each client's records and audit trails may take in the store; a write beyond it (a read that records a view included) is answered 507; 0 for no bound")
	o.String(&so.AdminToken, "admin-token", "", "bearer token the admin API requires (default: admin API open)")
	o.ListEnv(&so.AllowedHosts, "allowed-host", envPrefix+"ALLOWED_HOSTS",
		"host name the admin API also answers to, besides loopback names, the listen address, the --public-url host and --tls-host names (e.g. a compose service name); repeatable, comma-separated in the environment")
	o.Bool(&c.https, "https", true, "without --tls, answer HTTPS as well as plain HTTP on the port (each connection's first byte tells), with a certificate from the local CA kept in --ca-dir: MSAL refuses http:// authorities; false: plain HTTP only")
	o.String(&c.caDir, "ca-dir", "", "directory the local CA of --https is kept in and reused from, so that it is trusted once (referrals-sandbox trust): ca.pem for clients, ca-key.pem private; it must be yours and not writable by group or others (default: referrals-sandbox in the user's configuration directory, e.g. ~/.config/referrals-sandbox)")
	o.Bool(&so.TLS, "tls", false, "serve HTTPS only, with a certificate from a local CA created at start (plain HTTP gets a 400, except /__sandbox/ca.pem)")
	o.String(&so.TLSDir, "tls-dir", "", "directory the CA certificate (ca.pem) is written to with --tls; it must be yours and not writable by group or others (default: a new private directory per start, removed at exit; the ready line's ca_cert names it)")
	o.List(&so.TLSHosts, "tls-host", "extra host name for the certificate (e.g. a compose service name); repeatable")
	o.String(&so.TLSCertFile, "tls-cert", "", "PEM certificate to serve with --tls instead of the local CA's")
	o.String(&so.TLSKeyFile, "tls-key", "", "PEM private key of --tls-cert")
	o.String(&so.Redis.URL, "redis", "", "shared mode: keep the records in this Redis (redis://[:password@]host:port/db or rediss:// for TLS), shared by every replica given it; excludes --data")
	o.String(&so.Redis.ClusterURL, "redis-cluster", "", "shared mode on a Redis Cluster: seed nodes as redis://[:password@]host:port?addr=host2:port2&addr=host3:port3 (or rediss://); every key carries --redis-prefix as its hash tag; excludes --redis and --data")
	o.List(&so.Redis.NATMap, "redis-cluster-nat-map", "with --redis-cluster: reach a node announcing ANNOUNCED host:port at REACHABLE host:port instead (ANNOUNCED=REACHABLE; repeatable, comma-separated in the environment), for a cluster in containers or behind NAT whose nodes announce addresses this replica cannot reach")
	o.Int(&so.Redis.Wait, "redis-wait", 0, "follow every Redis write with WAIT N: acknowledge a change only once N replicas have it, so a failover cannot lose it (0: asynchronous replication, Redis's default)")
	o.String(&so.Redis.Prefix, "redis-prefix", store.DefaultRedisPrefix, "prefix of every key the sandbox writes in Redis, so one Redis database holds several sandboxes")
	o.Duration(&so.Redis.Timeout, "redis-timeout", store.DefaultRedisTimeout, "time limit of each Redis operation")
	o.Duration(&c.shutdownGrace, "shutdown-grace", 10*time.Second, "how long SIGTERM waits for requests in flight")
	o.String(&c.upstream, "upstream", "", "recording proxy: forward partner calls to this real service root_url and answer with its answers, journaled with every value replaced by a placeholder of its form (needs --upstream-auth-url)")
	o.String(&c.upstreamAuth, "upstream-auth-url", "", "recording proxy: the real service's auth_url; token requests go to AUTH_URL/oauth2/v2.0/token")
	o.ListEnv(&c.upstreamKeep, "upstream-keep", envPrefix+"UPSTREAM_KEEP",
		"recording proxy: JSON member or header NAME whose values the journal keeps as the real service sent them, where you know they are never patient data (every other value becomes a placeholder of its form; see docs/security.md); repeatable, comma-separated in the environment")
	o.String(&so.ContractFile, "contract", "", "OpenAPI 3.0 or 3.1 document (JSON or YAML; 3.1 is taken as its 3.0 translation) whose schemas replace the built-in shapes of the referral operations it describes (see docs/contract.md)")
	o.String(&c.metricsAddr, "metrics-addr", "", "also serve the Prometheus metrics at /metrics on this address, without the admin token (default: only "+sandbox.MetricsPath+", guarded like the admin API)")
	o.String(&c.otlpEndpoint, "otlp-endpoint", "", "trace each partner request: export a span per request to this OTLP/HTTP receiver's base URL (http://collector:4318; spans go to its /v1/traces); the standard OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT work too (default: no tracing; see docs/tracing.md)")
	o.String(&c.healthFile, "health-file", "", "file serve writes its health URL and CA path to once listening, for healthcheck (the image sets /tmp/referrals-sandbox-health.json)")
}

// check refuses flag values that parse but make no sense, naming the flag
// (exit status 2).
func (c *serveConfig) check() error {
	version, err := idp.ParseTokenVersion(c.tokenVersion)
	if err != nil {
		return fmt.Errorf("%w: --token-version: %v", errUsage, err)
	}
	c.opts.TokenVersion = version
	so := c.opts
	switch {
	case so.Environment != referrals.EnvironmentDevelopment && so.Environment != referrals.EnvironmentProduction:
		return fmt.Errorf("%w: --environment must be development or production, not %q", errUsage, so.Environment)
	case so.RateLimit < 0:
		return fmt.Errorf("%w: --rate-limit must not be negative", errUsage)
	case so.RateBurst < 0:
		return fmt.Errorf("%w: --rate-burst must not be negative", errUsage)
	case so.JournalSize < 1:
		return fmt.Errorf("%w: --journal-size must be at least 1", errUsage)
	case so.JournalBytes < sandbox.MinJournalBytes:
		return fmt.Errorf("%w: --journal-bytes must be at least %d (1 MiB)", errUsage, sandbox.MinJournalBytes)
	case so.Quota.Records < 0 || so.Quota.Bytes < 0:
		return fmt.Errorf("%w: --quota-records and --quota-bytes must not be negative", errUsage)
	case so.TokenLifetime < time.Second:
		return fmt.Errorf("%w: --token-lifetime must be at least 1s", errUsage)
	case so.ClockSkew < 0:
		return fmt.Errorf("%w: --clock-skew must not be negative", errUsage)
	case so.Redis.URL != "" && so.DataFile != "":
		return fmt.Errorf("%w: --data and --redis exclude each other: the records live either in a file or in Redis", errUsage)
	case so.Redis.URL != "" && !strings.HasPrefix(so.Redis.URL, "redis://") && !strings.HasPrefix(so.Redis.URL, "rediss://"):
		return fmt.Errorf("%w: --redis must start with redis:// or rediss://", errUsage)
	case so.Redis.ClusterURL != "" && so.Redis.URL != "":
		return fmt.Errorf("%w: --redis and --redis-cluster exclude each other", errUsage)
	case so.Redis.ClusterURL != "" && so.DataFile != "":
		return fmt.Errorf("%w: --data and --redis-cluster exclude each other: the records live either in a file or in Redis", errUsage)
	case so.Redis.ClusterURL != "" && !strings.HasPrefix(so.Redis.ClusterURL, "redis://") && !strings.HasPrefix(so.Redis.ClusterURL, "rediss://"):
		return fmt.Errorf("%w: --redis-cluster must start with redis:// or rediss://", errUsage)
	case len(so.Redis.NATMap) > 0 && so.Redis.ClusterURL == "":
		return fmt.Errorf("%w: --redis-cluster-nat-map needs --redis-cluster", errUsage)
	case so.Redis.Wait < 0:
		return fmt.Errorf("%w: --redis-wait must not be negative", errUsage)
	case (so.Redis.URL != "" || so.Redis.ClusterURL != "") && (so.Redis.Prefix == "" || so.Redis.Timeout <= 0):
		return fmt.Errorf("%w: --redis-prefix must not be empty and --redis-timeout must be positive", errUsage)
	case (c.upstream == "") != (c.upstreamAuth == ""):
		return fmt.Errorf("%w: --upstream and --upstream-auth-url go together", errUsage)
	case c.shutdownGrace < 0:
		return fmt.Errorf("%w: --shutdown-grace must not be negative", errUsage)
	case so.PublicURL != "" && !strings.HasPrefix(so.PublicURL, "http://") && !strings.HasPrefix(so.PublicURL, "https://"):
		return fmt.Errorf("%w: --public-url must start with http:// or https://", errUsage)
	}
	if _, err := backend.ParseRedisNATMap(so.Redis.NATMap); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if c.metricsAddr != "" {
		if err := checkListenAddr(c.metricsAddr); err != nil {
			return fmt.Errorf("%w (--metrics-addr)", err)
		}
	}
	return checkListenAddr(c.addr)
}

// checkListenAddr refuses an --addr that no listener could take, so that
// a typo is a usage error (exit 2) rather than a failure to start.
func checkListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: --addr must be host:port, such as 127.0.0.1:8080 or :8080, not %q", errUsage, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%w: --addr port must be a number from 0 to 65535 (0 picks a free port), not %q", errUsage, port)
	}
	return nil
}

// listenError explains the usual reason a listener cannot start.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("listen on %s: %w (another program, perhaps another sandbox, has this port: pick another with --addr, or --addr 127.0.0.1:0 for a free one; the ready line says which)", addr, err)
	}
	return fmt.Errorf("listen on %s: %w", addr, err)
}

func runServe(ctx context.Context, e env, args []string) error {
	o, c := serveFlags(e)
	if err := o.parse(args); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	logger, err := newLogger(e.stderr, c.logFormat, c.logLevel)
	if err != nil {
		return err
	}
	c.opts.Logger = logger
	c.opts.ListenAddr = c.addr
	if err := c.chooseCADir(); err != nil {
		logger.Warn("serving plain HTTP only", "err", err)
	}
	if c.upstream != "" {
		c.opts.Upstream = &sandbox.UpstreamConfig{RootURL: c.upstream, AuthURL: c.upstreamAuth, Keep: c.upstreamKeep}
		logger.Warn("recording proxy: partner calls go to the real service", "upstream", c.upstream, "upstream_auth_url", c.upstreamAuth)
	}
	info, ok := debug.ReadBuildInfo()
	v := currentVersion(buildVersion{version, commit, date}, info, ok)
	c.opts.Build = sandbox.BuildInfo{Version: v.version, Commit: v.commit}
	tracer, err := tracing.New(ctx, tracing.Config{Endpoint: c.otlpEndpoint, Getenv: e.getenv, ServiceVersion: v.version})
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if tracer != nil {
		c.opts.TracerProvider = tracer
		logger.Info("tracing: a span per partner request, exported over OTLP (see docs/tracing.md)")
		// Deferred before the server's own shutdown is: it runs after the
		// requests in flight have ended, so their spans are flushed too.
		defer flushSpans(logger, tracer)
	}
	restoreGC := collectLessWhileOpening(c.opts.DataFile)
	in, err := sandbox.OpenContext(ctx, c.opts)
	restoreGC()
	if err != nil && ctx.Err() != nil {
		// SIGINT or SIGTERM while loading: stop as asked, as a ready
		// sandbox does.
		logger.Info("stopped before ready: a signal arrived while opening", "err", err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	defer func() {
		if err := in.Close(); err != nil {
			logger.Error("close store", "err", err)
		}
	}()
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return listenError(c.addr, err)
	}
	if warning := sandbox.AdminExposureWarning(ln.Addr(), c.opts.AdminToken); warning != "" {
		logger.Warn(warning, "addr", ln.Addr().String())
	}
	addr := ln.Addr().(*net.TCPAddr)
	removeHealthFile, err := recordHealth(c.healthFile, in, addr)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer removeHealthFile()
	if c.metricsAddr != "" {
		stop, err := serveMetrics(logger, in, c.metricsAddr)
		if err != nil {
			_ = ln.Close()
			return err
		}
		defer stop()
	}
	announce(e.stdout, logger, in, addr, c)
	return serveUntilDone(ctx, logger, in, ln, c.shutdownGrace)
}

// chooseCADir sets the CA directory of --https: --ca-dir, or the
// default, which may be missing or read-only (a container's home): then
// the sandbox serves plain HTTP only, with a warning.
func (c *serveConfig) chooseCADir() error {
	if c.opts.TLS || !c.https {
		return nil
	}
	if c.caDir != "" {
		c.opts.CADir = c.caDir
		return nil
	}
	dir, err := tlsca.DefaultDir()
	if err != nil {
		return err
	}
	c.opts.CADir, c.opts.CADirOptional = dir, true
	return nil
}

// spanFlushTimeout bounds how long exit waits for the last spans to reach
// the OTLP receiver: a receiver that is down must not hold the exit up.
const spanFlushTimeout = 5 * time.Second

// flushSpans exports the spans still batched and stops the exporter.
func flushSpans(logger *slog.Logger, tracer *sdktrace.TracerProvider) {
	ctx, cancel := context.WithTimeout(context.Background(), spanFlushTimeout)
	defer cancel()
	if err := tracer.Shutdown(ctx); err != nil {
		logger.Error("flush the last spans to the OTLP endpoint", "err", err)
	}
}

// serveUntilDone serves until ctx ends (SIGINT, SIGTERM), then drains
// requests in flight for up to grace.
func serveUntilDone(ctx context.Context, logger *slog.Logger, in *sandbox.Instance, ln net.Listener, grace time.Duration) error {
	httpServer := sandbox.NewHTTPServer(in.Server, logger)
	if in.TLS != nil {
		ln = sandbox.NewTLSListener(ln, in.TLS, logger)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- httpServer.Serve(ln) }()
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "grace", grace.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// announce logs the ready line with the addresses a partner configures and,
// for the embedded fixtures, prints their public credentials on stdout.
func announce(stdout io.Writer, logger *slog.Logger, in *sandbox.Instance, addr *net.TCPAddr, c *serveConfig) {
	base := strings.TrimRight(c.opts.PublicURL, "/")
	if base == "" {
		scheme := "http"
		if in.HTTPSOnly {
			scheme = "https"
		}
		base = scheme + "://" + advertisedHost(addr)
	}
	var ids []string
	for _, cl := range in.Provider.Clients() {
		ids = append(ids, cl.ClientID)
	}
	attrs := []any{
		"addr", addr.String(),
		"auth_url", in.Provider.AuthURL(base),
		"token_url", in.Provider.TokenURL(base),
		"base_url", base + "/api/v1",
		"root_url", base,
		"environment", c.opts.Environment,
		"clients", strings.Join(ids, ","),
	}
	if in.TLS != nil && !in.HTTPSOnly && c.opts.PublicURL == "" {
		attrs = append(attrs, "https_auth_url", in.Provider.AuthURL("https://"+advertisedHost(addr)))
	}
	if in.CAPath != "" {
		attrs = append(attrs, "ca_cert", in.CAPath)
	}
	if in.SharedMode != "" {
		attrs = append(attrs, "shared_mode", in.SharedMode)
	}
	if c.opts.PublicURL == "" && addr.IP.IsUnspecified() {
		attrs = append(attrs, "url_note", publishedPortNote)
	}
	logger.Info("referrals-sandbox ready", attrs...)
	if in.EmbeddedFixtures {
		printDefaultCredentials(stdout, in.Provider.Clients())
	}
	if in.CAPath != "" {
		printTrust(stdout, in, addr, c.opts.PublicURL)
	}
}

// publishedPortNote goes on the ready line when the sandbox listens on
// every interface without --public-url: in a container (the image listens
// on 0.0.0.0:8080) the URLs above are the container's own, and the port
// published on the host, or a proxy in front, is what clients use.
const publishedPortNote = "these URLs are as seen from inside this host or container; clients reach the sandbox at its published port or proxy, which may differ: set --public-url (SANDBOX_PUBLIC_URL) to advertise that address"

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
func printDefaultCredentials(w io.Writer, clients []referrals.Client) {
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
