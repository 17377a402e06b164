package sandbox_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi/contract"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// Default credentials of the embedded fixtures.
const (
	partner    = "sandbox-partner"
	partner2   = "sandbox-partner-2"
	readonly   = "sandbox-readonly"
	noroles    = "sandbox-noroles"
	otherAPI   = "sandbox-other-api"
	apiScope   = "api://referrals-sandbox/.default"
	otherScope = "api://other-api/.default"
)

// testSandbox is the whole sandbox on an httptest server, reached over real
// HTTP. Its client validates every exchange against the OpenAPI document.
type testSandbox struct {
	t      *testing.T
	URL    string
	Clock  *clock.Adjustable
	Store  store.Store
	Logs   *testutil.LockedBuffer
	client *http.Client
	plain  *http.Client
	server *sandbox.Server // for the exported-for-test accessors
}

// sandboxConfig is what newSandbox builds a sandbox from: the server's
// configuration, and the parts of its backend a test may choose.
type sandboxConfig struct {
	sandbox.Config
	// Store keeps the records: the pass's, or a test's own.
	Store store.Store
	// Redis, when set, runs the shared mode on it, under RedisPrefix.
	Redis       redis.UniversalClient
	RedisPrefix string
	// Library and MaxRules are the backend's (backend.Config); zero
	// values are its defaults.
	Library  *scenarios.Library
	MaxRules int
}

// sandboxOption changes the configuration before the server is built.
type sandboxOption func(*sandboxConfig)

// openBackend builds cfg's backend: the shared mode on cfg.Redis, or
// everything else in memory beside cfg.Store.
func openBackend(t *testing.T, cfg sandboxConfig) *backend.Backend {
	t.Helper()
	bcfg := backend.Config{
		Clock: cfg.Clock, Library: cfg.Library, MaxRules: cfg.MaxRules, JournalSize: cfg.Config.JournalSize, JournalBytes: cfg.Config.JournalBytes,
		Redis: backend.RedisConfig{Prefix: cfg.RedisPrefix},
	}
	var b *backend.Backend
	var err error
	if cfg.Redis != nil {
		b, err = backend.Shared(t.Context(), bcfg, cfg.Redis, cfg.Store)
	} else {
		b, err = backend.Memory(bcfg, cfg.Store)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newSandbox starts a sandbox over the default fixtures and a clock at real
// time, on the backend of the current pass (see backend_test.go: an
// in-memory store, or the shared mode on Redis), and stops it when the
// test ends.
func newSandbox(t *testing.T, opts ...sandboxOption) *testSandbox {
	t.Helper()
	set, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewAdjustable(nil)
	logs := &testutil.LockedBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := sandboxConfig{Config: sandbox.Config{Fixtures: set, Clock: clk, Logger: logger}}
	release := onBackend(t, &cfg)
	t.Cleanup(release)
	harnessStore, harnessRedis := cfg.Store, cfg.Redis
	for _, o := range opts {
		o(&cfg)
	}
	if ownsBackend(cfg, harnessStore, harnessRedis) {
		if current.name == "redis" {
			t.Skip("brings its own backend, so it runs once, in the memory pass")
		}
	} else {
		recordHarnessTest(t)
	}
	cfg.Backend = openBackend(t, cfg)
	in, err := sandbox.Open(cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	srv := in.Server
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		_ = in.Close()
		_ = cfg.Store.Close()
	})
	return &testSandbox{
		t: t, URL: ts.URL, Clock: clk, Store: cfg.Store, Logs: logs,
		client: contract.New(t, ts.URL).Client(),
		plain:  ts.Client(),
		server: srv,
	}
}

// withClients changes the client list (a copy of it) and runs the sandbox
// as environment (development when empty), as clients.json and
// --environment would.
func withClients(environment string, change func([]referrals.Client) []referrals.Client) sandboxOption {
	return func(c *sandboxConfig) {
		set := *c.Fixtures
		set.Clients = change(slices.Clone(set.Clients))
		c.Fixtures, c.Environment = &set, environment
	}
}

// response is what a test looks at: status, headers and body.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// decode unmarshals the body into v, failing the test on bad JSON.
func (r *response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %d body %q: %v", r.Status, r.Body, err)
	}
}

// problem decodes an application/problem+json body, checking its type.
func (r *response) problem(t *testing.T) sandbox.Problem {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, sandbox.ProblemContentType) {
		t.Fatalf("status %d Content-Type %q, want %s; body %s", r.Status, ct, sandbox.ProblemContentType, r.Body)
	}
	var p sandbox.Problem
	r.decode(t, &p)
	if p.Status != r.Status {
		t.Errorf("problem status %d, response status %d", p.Status, r.Status)
	}
	return p
}

// request describes one call. Body is JSON-encoded unless it is a string
// (sent as is) or nil.
type request struct {
	method  string
	path    string
	token   string
	body    any
	headers map[string]string
	// host, when set, is sent as the Host header instead of the server's.
	host string
	// invalid marks a deliberately bad request: the contract check then
	// validates only the response.
	invalid bool
	// unknownRoute marks a request whose path or method is not in the API.
	unknownRoute bool
	// plain sends without the contract check (faults, admin API).
	plain bool
}

// do sends req and reads the whole response, failing the test on a
// transport error (send returns it instead).
func (s *testSandbox) do(req request) *response {
	s.t.Helper()
	resp, err := s.send(nil, req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", req.method, req.path, err)
	}
	return resp
}

// tokenResponse posts a client-credentials request with form credentials.
func (s *testSandbox) tokenResponse(clientID, secret, scope string) *response {
	s.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}, "scope": {scope}}
	resp, err := s.client.Post(s.URL+"/"+idp.DefaultTenant+"/oauth2/v2.0/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// token returns an access token for one of the default clients (secret
// "<id>-secret"), for api://referrals-sandbox unless it is sandbox-other-api.
func (s *testSandbox) token(clientID string) string {
	s.t.Helper()
	scope := apiScope
	if clientID == otherAPI {
		scope = otherScope
	}
	resp := s.tokenResponse(clientID, clientID+"-secret", scope)
	if resp.Status != http.StatusOK {
		s.t.Fatalf("token for %s: %d %s", clientID, resp.Status, resp.Body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	resp.decode(s.t, &tok)
	return tok.AccessToken
}

// admin calls the admin API, checked against its OpenAPI document
// (openapi.AdminDocument) like every API call. A state-changing call
// without a body sends {}, as the admin API requires.
func (s *testSandbox) admin(method, path string, body any) *response {
	s.t.Helper()
	if body == nil && method != http.MethodGet && method != http.MethodHead {
		body = map[string]any{}
	}
	return s.do(request{method: method, path: path, body: body})
}

// adminInvalid is admin for a request that breaks the admin document on
// purpose (a bad body or query): only its answer is checked.
func (s *testSandbox) adminInvalid(method, path string, body any) *response {
	s.t.Helper()
	return s.do(request{method: method, path: path, body: body, invalid: true})
}

// advance moves the sandbox clock through the admin API.
func (s *testSandbox) advance(d time.Duration) {
	s.t.Helper()
	if r := s.admin(http.MethodPost, "/__sandbox/clock", map[string]string{"advance": d.String()}); r.Status != http.StatusOK {
		s.t.Fatalf("advance clock: %d %s", r.Status, r.Body)
	}
}

// validPatient is a patient every rule accepts.
func validPatient() map[string]any {
	return map[string]any{"firstName": "Ann", "lastName": "Lee", "dateOfBirth": "1980-04-12", "gender": "female"}
}

// openSandbox opens a sandbox with opts, as serve does, and serves it on
// httptest until the test ends: for tests of options newSandbox does not
// take (shared mode on a Redis or cluster of their own).
func openSandbox(t *testing.T, opts sandbox.Config) *testSandbox {
	t.Helper()
	s, _ := serveSandbox(t, opts)
	return s
}

// serveSandbox is openSandbox that also returns the httptest server, for a
// test that stops it early: Close waits for every handler to return.
func serveSandbox(t *testing.T, opts sandbox.Config) (*testSandbox, *httptest.Server) {
	t.Helper()
	in, err := sandbox.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(in.Server)
	t.Cleanup(func() {
		ts.Close()
		_ = in.Close()
	})
	return &testSandbox{t: t, URL: ts.URL, client: ts.Client(), plain: ts.Client()}, ts
}
