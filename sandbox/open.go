package sandbox

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/metrics"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tlsca"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// Config is everything a sandbox is built from: the serve command fills it
// from flags, sandboxtest from Go options, tests from both plain values and
// parts they build themselves (Fixtures, Contract, Backend). The zero
// value is a working sandbox: embedded fixtures and key, in-memory store,
// no rate limit, plain HTTP. With TLS, an empty TLSDir means a new private
// directory for ca.pem (tlsca.PrivateDir), removed by Close. Open never
// changes the Config it is given.
type Config struct {
	PublicURL     string
	Tenant        string
	Environment   string
	TokenLifetime time.Duration
	// TokenVersion is the access-token format (idp.TokenV2 by default).
	TokenVersion   idp.TokenVersion
	ClockSkew      time.Duration
	SigningKeyFile string
	FixturesDir    string
	DataFile       string
	ScenarioNames  []string
	ScenariosDir   string
	RateLimit      float64
	RateBurst      int
	JournalSize    int
	JournalBytes   int64
	AdminToken     string
	TLS            bool
	TLSDir         string
	TLSHosts       []string
	TLSCertFile    string
	TLSKeyFile     string
	// CADir, without TLS, keeps a local CA there (tlsca.LoadOrCreate) and
	// makes the port answer HTTPS as well as plain HTTP, each connection's
	// first byte telling which: MSAL refuses http:// authorities, and the
	// CA is trusted once since every start reuses it. "" serves plain HTTP
	// only. With TLS it is not used (--tls keeps its own CA per start).
	CADir string
	// CADirOptional makes a CADir that cannot be used (a read-only home
	// in a container) a warning rather than an error: the sandbox then
	// serves plain HTTP only. serve sets it for its default directory.
	CADirOptional bool
	Logger        *slog.Logger
	// Clock is the sandbox clock; default real time.
	Clock *clock.Adjustable
	// ListenAddr is the --addr; a host name in it is one the admin API
	// answers to.
	ListenAddr string
	// AllowedHosts are more host names the admin API answers to
	// (--allowed-host), besides loopback names, the connection's own
	// address, ListenAddr's host, PublicURL's host and TLSHosts.
	AllowedHosts []string
	// Redis (--redis, --redis-cluster and the flags that go with them),
	// when it names a Redis, keeps the whole state there, shared by every
	// replica given the same one and prefix; the zero value keeps it in
	// this process.
	Redis backend.RedisConfig
	// Upstream, when set, makes the sandbox a recording proxy in front of
	// the real service (serve --upstream, --upstream-auth-url).
	Upstream *UpstreamConfig
	// ContractFile, when set, is an OpenAPI document (JSON or YAML) whose
	// shapes replace the built-in ones (serve --contract).
	ContractFile string
	// Build names this build in the metrics (referrals_sandbox_build_info).
	Build BuildInfo
	// Quota bounds what each client may store, records and bytes with
	// their audit trails (serve --quota-records, --quota-bytes); a write
	// beyond it is answered 507 and stores nothing. The zero value is no
	// bound.
	Quota store.Quota
	// TracerProvider, when set, gives each partner request a span exported
	// by it (serve builds one with package tracing when an OTLP endpoint is
	// configured); nil traces nothing. Its owner shuts it down.
	TracerProvider trace.TracerProvider
	// MaxHeld and MaxHeldPerClient cap the requests delays and hangs hold
	// open at once, in total and per verified client; default
	// DefaultMaxHeld and DefaultMaxHeldPerClient (package failures).
	MaxHeld          int
	MaxHeldPerClient int

	// The parts below, when set, are used as given instead of being built
	// from the plain values above.

	// Fixtures are the clients, trials and records, instead of
	// FixturesDir's or the embedded ones. The server keeps their records
	// encoded, not this set's decoded copies.
	Fixtures *fixtures.Set
	// Contract is a loaded --contract, instead of ContractFile's.
	Contract *contractdoc.Contract
	// Backend is where the state lives, instead of the one DataFile or
	// Redis would open; its caller closes it, after the Instance. Its
	// clock is the sandbox clock (Clock, when set, must be it).
	Backend *backend.Backend
}

// BuildInfo names the build in the metrics (referrals_sandbox_build_info).
type BuildInfo = metrics.BuildInfo

// Instance is an opened sandbox: the handler and what it was built from.
type Instance struct {
	Server   *Server
	Provider *idp.Provider
	Clock    *clock.Adjustable
	// ClientClocks are the clocks of clients moved on their own.
	ClientClocks *clock.PerClient
	// Fixtures are the clients and trials of the fixtures; their records
	// are kept encoded by the server, to reset the store to.
	Fixtures *fixtures.Set
	// EmbeddedFixtures is true when the defaults are in use (their public
	// credentials may be printed).
	EmbeddedFixtures bool
	// TLS is the server TLS configuration, nil for plain HTTP.
	TLS *tls.Config
	// HTTPSOnly is true with --tls: plain HTTP is refused. With TLS set
	// and HTTPSOnly false (Config.CADir), the port answers both.
	HTTPSOnly bool
	// CACertPEM is the generated CA certificate (nil with --tls-cert or
	// without TLS); CAPath is where it was written.
	CACertPEM []byte
	CAPath    string
	// CACreated is true when this start made the kept CA of CADir: no
	// client trusts it yet.
	CACreated bool
	// privateTLSDir is the directory Open created for CAPath, removed by
	// Close; "" when the caller chose the directory.
	privateTLSDir string

	// SharedMode is where the shared state lives (no password), "" when it
	// is in this process.
	SharedMode string
	// backend is the state Server keeps, closed by Close when Open opened
	// it (ownsBackend).
	backend     *backend.Backend
	ownsBackend bool
}

// Open builds a sandbox from cfg.
func Open(cfg Config) (*Instance, error) {
	return OpenContext(context.Background(), cfg)
}

// OpenContext is Open, stopped with ctx's error when ctx ends while it
// loads the contract (the one step of opening that can take long).
func OpenContext(ctx context.Context, cfg Config) (*Instance, error) {
	opts := cfg // filled with defaults; cfg stays as given
	if err := opts.fillDefaults(); err != nil {
		return nil, err
	}
	set, embedded := opts.Fixtures, false
	if set == nil {
		var err error
		if set, embedded, err = loadFixtures(opts.FixturesDir); err != nil {
			return nil, err
		}
	}
	contract := opts.Contract
	if opts.ContractFile != "" {
		var err error
		if contract, err = contractdoc.LoadFileContext(ctx, opts.ContractFile); err != nil {
			return nil, err
		}
	}
	provider, err := newProvider(opts, set)
	if err != nil {
		return nil, err
	}
	in := &Instance{Provider: provider, Fixtures: &fixtures.Set{Clients: set.Clients, Trials: set.Trials}, EmbeddedFixtures: embedded, HTTPSOnly: opts.TLS}
	if err := in.setUpTLS(opts); err != nil {
		return nil, err
	}
	hosts, err := allowedHosts(opts)
	if err != nil {
		return nil, errors.Join(err, in.removePrivateTLSDir())
	}
	if in.backend = opts.Backend; in.backend == nil {
		if in.backend, err = openBackend(ctx, &opts); err != nil {
			return nil, errors.Join(err, in.removePrivateTLSDir())
		}
		in.ownsBackend = true
	}
	in.Clock, in.ClientClocks, in.SharedMode = opts.Clock, in.backend.ClientClocks, in.backend.Location
	in.Server, err = newServer(parts{
		Provider: provider, Logger: opts.Logger, Backend: in.backend,
		RateLimit: opts.RateLimit, RateBurst: opts.RateBurst, AdminToken: opts.AdminToken, CACertPEM: in.CACertPEM,
		HTTPSOnly: opts.TLS, AllowedHosts: hosts, Upstream: opts.Upstream, Contract: contract,
		Build: opts.Build, TracerProvider: opts.TracerProvider, MaxHeld: opts.MaxHeld, MaxHeldPerClient: opts.MaxHeldPerClient,
	}, set)
	if err != nil {
		_ = in.Close()
		return nil, err
	}
	// The backend's Redis client is this instance's own, so no other
	// sandbox is using it while the observer goes in.
	in.backend.ObserveCalls(in.Server.metrics)
	// Reading fixtures or a data file leaves their decoded and encoded
	// copies behind as garbage (with 100,000 referrals, about as much as
	// what stays live): return it to the OS now rather than keep it
	// resident until the heap grows that far again. The embedded fixtures
	// leave too little to be worth the full collection this forces on
	// every start, and fixtures given as a part are their caller's.
	if opts.Fixtures == nil && (opts.FixturesDir != "" || opts.DataFile != "") {
		debug.FreeOSMemory()
	}
	return in, nil
}

// fillDefaults checks the plain values and fills in what was left out.
func (opts *Config) fillDefaults() error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Backend != nil {
		switch own := opts.Backend.ClientClocks.Global(); {
		case opts.DataFile != "" || opts.Redis.URL != "" || opts.Redis.ClusterURL != "":
			return errors.New("sandbox: a Backend excludes DataFile and Redis, which would open another")
		case opts.Clock == nil:
			opts.Clock = own
		case opts.Clock != own:
			return errors.New("sandbox: the Backend's clock is not Clock")
		}
	}
	if opts.Clock == nil {
		opts.Clock = clock.NewAdjustable(nil)
	}
	if opts.Environment == "" {
		opts.Environment = referrals.EnvironmentDevelopment
	}
	if opts.Environment != referrals.EnvironmentDevelopment && opts.Environment != referrals.EnvironmentProduction {
		return fmt.Errorf("environment must be development or production, not %q", opts.Environment)
	}
	if opts.RateLimit < 0 || opts.RateBurst < 0 || opts.JournalSize < 0 || opts.JournalBytes < 0 {
		return errors.New("rate limit, rate burst, journal size and journal bytes must not be negative")
	}
	if opts.Fixtures != nil && opts.FixturesDir != "" || opts.Contract != nil && opts.ContractFile != "" {
		return errors.New("sandbox: Fixtures and FixturesDir, or Contract and ContractFile, exclude each other")
	}
	return nil
}

// newProvider builds the identity provider over set's clients.
func newProvider(opts Config, set *fixtures.Set) (*idp.Provider, error) {
	keyPEM := fixtures.DefaultSigningKeyPEM()
	if opts.SigningKeyFile != "" {
		var err error
		if keyPEM, err = os.ReadFile(opts.SigningKeyFile); err != nil {
			return nil, fmt.Errorf("signing key: %w", err)
		}
	}
	keys, err := idp.LoadKeys(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", opts.SigningKeyFile, err)
	}
	return idp.New(idp.Config{
		Tenant: opts.Tenant, Environment: opts.Environment, Clients: set.Clients,
		TokenLifetime: opts.TokenLifetime, TokenVersion: opts.TokenVersion, ClockSkew: opts.ClockSkew, Keys: keys, PublicURL: opts.PublicURL, Clock: opts.Clock, Logger: opts.Logger,
		Hosts: opts.TLSHosts,
	})
}

// openBackend opens the backend the plain values describe.
func openBackend(ctx context.Context, opts *Config) (*backend.Backend, error) {
	library, err := loadLibrary(opts)
	if err != nil {
		return nil, err
	}
	return backend.Open(ctx, backend.Config{
		Clock: opts.Clock, Library: library, Activate: opts.ScenarioNames, JournalSize: opts.JournalSize, JournalBytes: opts.JournalBytes,
		Quota: opts.Quota, DataFile: opts.DataFile, Redis: opts.Redis, Logger: opts.Logger,
	})
}

// Close releases the store (for a --data file: syncs and closes it and
// frees its lock), the Redis client of the shared mode, once the journal
// entries queued for it are written, and the TLS directory Open created.
func (in *Instance) Close() error {
	if in.Server != nil {
		if ferr := in.backend.Journal.Flush(context.Background()); ferr != nil {
			in.Server.log.Error("store the last journal entries", "err", ferr)
		}
	}
	var err error
	if in.ownsBackend {
		err = in.backend.Close()
	}
	return errors.Join(err, in.removePrivateTLSDir())
}

func (in *Instance) setUpTLS(opts Config) error {
	switch {
	case !opts.TLS && (opts.TLSCertFile != "" || opts.TLSKeyFile != ""):
		return errors.New("--tls-cert and --tls-key need --tls")
	case !opts.TLS && opts.CADir != "":
		return in.setUpKeptCA(opts)
	case !opts.TLS:
		return nil
	case (opts.TLSCertFile == "") != (opts.TLSKeyFile == ""):
		return errors.New("--tls-cert and --tls-key go together")
	case opts.TLSCertFile != "":
		cert, err := tls.LoadX509KeyPair(opts.TLSCertFile, opts.TLSKeyFile)
		if err != nil {
			return fmt.Errorf("tls certificate: %w", err)
		}
		in.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		return nil
	}
	ca, err := tlsca.New(opts.TLSHosts, opts.Clock.Now())
	if err != nil {
		return err
	}
	in.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server}, MinVersion: tls.VersionTLS12}
	in.CACertPEM = ca.CertPEM
	return in.writeCA(ca, opts.TLSDir)
}

func loadFixtures(dir string) (set *fixtures.Set, embedded bool, err error) {
	if dir == "" {
		set, err = fixtures.Default()
		return set, true, err
	}
	set, err = fixtures.LoadDir(dir)
	return set, false, err
}

// loadLibrary builds the library (embedded, plus the team's directory); a
// start-up scenario name ending in .json is a file, added to it, and
// named by the scenario's own name from then on.
func loadLibrary(opts *Config) (*scenarios.Library, error) {
	library, err := scenarios.LoadLibrary()
	if err != nil {
		return nil, err
	}
	if opts.ScenariosDir != "" {
		if err := library.AddDir(opts.ScenariosDir); err != nil {
			return nil, fmt.Errorf("scenarios directory: %w", err)
		}
	}
	names := make([]string, len(opts.ScenarioNames))
	for i, name := range opts.ScenarioNames {
		if strings.HasSuffix(name, ".json") {
			sc, err := library.AddFile(name)
			if err != nil {
				return nil, fmt.Errorf("scenario %s: %w", name, err)
			}
			name = sc.Name
		}
		names[i] = name
	}
	opts.ScenarioNames = names
	return library, nil
}
