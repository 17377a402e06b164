package sandbox_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi/contract"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
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
	Logs   *lockedBuffer
	client *http.Client
	plain  *http.Client
	server *sandbox.Server // for the exported-for-test accessors
}

// sandboxOption changes the configuration before the server is built.
type sandboxOption func(*sandbox.Config)

// newSandbox starts a sandbox over the default fixtures, an in-memory store
// and a clock at real time, and stops it when the test ends.
func newSandbox(t *testing.T, opts ...sandboxOption) *testSandbox {
	t.Helper()
	set, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := idp.LoadKeys(fixtures.DefaultSigningKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewAdjustable(nil)
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	provider, err := idp.New(idp.Config{Clients: set.Clients, Keys: keys, Clock: clk, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sandbox.Config{Provider: provider, Fixtures: set, Clock: clk, Logger: logger, Store: st}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
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
// as environment (development when empty), rebuilding the fixtures and the
// identity provider over them as clients.json and --environment would.
func withClients(t *testing.T, environment string, change func([]fixtures.Client) []fixtures.Client) sandboxOption {
	return func(c *sandbox.Config) {
		set := *c.Fixtures
		set.Clients = change(slices.Clone(set.Clients))
		keys, err := idp.LoadKeys(fixtures.DefaultSigningKeyPEM())
		if err != nil {
			t.Fatal(err)
		}
		provider, err := idp.New(idp.Config{Clients: set.Clients, Keys: keys, Clock: c.Clock, Logger: c.Logger, Environment: environment})
		if err != nil {
			t.Fatal(err)
		}
		c.Fixtures, c.Provider = &set, provider
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

// admin calls the admin API (not in the OpenAPI document) with a plain client.
func (s *testSandbox) admin(method, path string, body any) *response {
	s.t.Helper()
	return s.do(request{method: method, path: path, body: body, plain: true})
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

// lockedBuffer is a log sink safe for concurrent handlers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
