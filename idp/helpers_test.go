package idp_test

import (
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Credentials of the default fixtures, as a partner would paste them.
const (
	partnerID       = "sandbox-partner"
	partnerSecret   = "sandbox-partner-secret"
	otherAPIID      = "sandbox-other-api"
	otherAPISecret  = "sandbox-other-api-secret"
	defaultScope    = idp.DefaultResource + "/.default"
	otherAPIScope   = "api://other-api/.default"
	formContentType = "application/x-www-form-urlencoded"
)

// guidPattern is the canonical lowercase GUID form Entra writes.
var guidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// fixedTime is the sandbox time of every test; its fraction of a second
// checks that timestamps and token times are cut to whole seconds.
func fixedTime() time.Time { return time.Date(2026, 11, 21, 14, 3, 7, 123456789, time.UTC) }

// sandbox is a Provider served over HTTP on a fixed, adjustable clock.
type sandbox struct {
	provider *idp.Provider
	server   *httptest.Server
	clock    *clock.Adjustable
	keys     *idp.Keys
}

// newSandbox builds a Provider over the default fixtures and key; configure
// may change the config (extra clients, lifetime, logger...) before New.
func newSandbox(t *testing.T, configure ...func(*idp.Config)) *sandbox {
	t.Helper()
	keys, err := idp.LoadKeys(fixtures.DefaultSigningKeyPEM())
	if err != nil {
		t.Fatalf("LoadKeys: %v", err)
	}
	set, err := fixtures.Default()
	if err != nil {
		t.Fatalf("fixtures.Default: %v", err)
	}
	clk := clock.NewAdjustable(fixedTime)
	cfg := idp.Config{Clients: set.Clients, Keys: keys, Clock: clk}
	for _, c := range configure {
		c(&cfg)
	}
	p, err := idp.New(cfg)
	if err != nil {
		t.Fatalf("idp.New: %v", err)
	}
	srv := httptest.NewServer(p.Handler())
	t.Cleanup(srv.Close)
	return &sandbox{provider: p, server: srv, clock: clk, keys: keys}
}

// withClients registers extra clients beside the default fixtures.
func withClients(extra ...referrals.Client) func(*idp.Config) {
	return func(cfg *idp.Config) { cfg.Clients = append(append([]referrals.Client(nil), cfg.Clients...), extra...) }
}

// tokenPath is the tenant's token endpoint path.
func tokenPath() string { return "/" + idp.DefaultTenant + "/oauth2/v2.0/token" }

// issuer is the iss the sandbox writes for requests that reached it at base.
func issuer(base string) string { return base + "/" + idp.DefaultTenant + "/v2.0" }

// expectation is what the referrals API would ask Validate for.
func (s *sandbox) expectation() idp.Expectation {
	return idp.Expectation{Audience: idp.DefaultResource, ApplicationID: idp.ApplicationID(idp.DefaultResource), Issuers: []string{issuer(s.server.URL)}}
}

// tokenRequest describes one request to the token endpoint; zero fields
// mean a POST of a form to the tenant's endpoint without Authorization.
type tokenRequest struct {
	method        string
	path          string
	contentType   string // "" is the form type; "none" sends no Content-Type
	form          url.Values
	body          string // sent instead of form when set
	authorization string
	header        map[string]string
}

// reply is a response with its body read.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (s *sandbox) do(t *testing.T, req tokenRequest) reply {
	t.Helper()
	method, path, ct := req.method, req.path, req.contentType
	if method == "" {
		method = http.MethodPost
	}
	if path == "" {
		path = tokenPath()
	}
	body := req.body
	if body == "" {
		body = req.form.Encode()
	}
	r, err := http.NewRequest(method, s.server.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	switch ct {
	case "":
		r.Header.Set("Content-Type", formContentType)
	case "none":
	default:
		r.Header.Set("Content-Type", ct)
	}
	if req.authorization != "" {
		r.Header.Set("Authorization", req.authorization)
	}
	for k, v := range req.header {
		r.Header.Set(k, v)
	}
	return send(t, s.server.Client(), r)
}

// get fetches path from the sandbox.
func (s *sandbox) get(t *testing.T, path string) reply {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, s.server.URL+path, nil)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	return send(t, s.server.Client(), r)
}

func send(t *testing.T, c *http.Client, r *http.Request) reply {
	t.Helper()
	resp, err := c.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// postForm is a client_secret_post form.
func postForm(id, secret, scope string) url.Values {
	return url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {scope}}
}

// basicAuth is a client_secret_basic header: RFC 6749 2.3.1 form-url-encodes
// id and secret before base64.
func basicAuth(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// tokenBody is the success body.
type tokenBody struct {
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	ExtExpiresIn int    `json:"ext_expires_in"`
	AccessToken  string `json:"access_token"`
}

// requireToken checks a success reply and returns its body.
func requireToken(t *testing.T, rep reply) tokenBody {
	t.Helper()
	if rep.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", rep.status, rep.body)
	}
	if cc := rep.header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(rep.body, &raw); err != nil {
		t.Fatalf("body %s: %v", rep.body, err)
	}
	for _, k := range []string{"token_type", "expires_in", "ext_expires_in", "access_token"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("body has no %s: %s", k, rep.body)
		}
	}
	var b tokenBody
	if err := json.Unmarshal(rep.body, &b); err != nil {
		t.Fatalf("body %s: %v", rep.body, err)
	}
	if b.TokenType != "Bearer" || b.AccessToken == "" || b.ExtExpiresIn != b.ExpiresIn {
		t.Errorf("token body %+v", b)
	}
	return b
}

// fetchToken gets an access token with client_secret_post.
func (s *sandbox) fetchToken(t *testing.T, id, secret, scope string) string {
	t.Helper()
	return requireToken(t, s.do(t, tokenRequest{form: postForm(id, secret, scope)})).AccessToken
}

// wantError is an expected token error.
type wantError struct {
	status int
	code   string
	aadsts int
}

// checkTokenError asserts the whole Entra error shape of rep, with the
// timestamp of the sandbox clock at now, and returns the body. aadsts 0
// skips the code check.
func checkTokenError(t *testing.T, rep reply, want wantError, now time.Time) idp.ErrorBody {
	t.Helper()
	if rep.status != want.status {
		t.Errorf("status %d, want %d; body %s", rep.status, want.status, rep.body)
	}
	if cc := rep.header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	if ct := rep.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(rep.body, &raw); err != nil {
		t.Fatalf("body %q: %v", rep.body, err)
	}
	for _, k := range []string{"error", "error_description", "error_codes", "timestamp", "trace_id", "correlation_id"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("body has no %s: %s", k, rep.body)
		}
	}
	var b idp.ErrorBody
	// error_codes decodes into []int only when every element is a JSON integer.
	if err := json.Unmarshal(rep.body, &b); err != nil {
		t.Fatalf("body %s: %v", rep.body, err)
	}
	if b.Error != want.code {
		t.Errorf("error %q, want %q", b.Error, want.code)
	}
	if want.aadsts != 0 && (len(b.ErrorCodes) != 1 || b.ErrorCodes[0] != want.aadsts) {
		t.Errorf("error_codes %v, want [%d]", b.ErrorCodes, want.aadsts)
	}
	stamp := now.UTC().Format("2006-01-02 15:04:05Z")
	if !regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z$`).MatchString(b.Timestamp) || b.Timestamp != stamp {
		t.Errorf("timestamp %q, want %q", b.Timestamp, stamp)
	}
	if !guidPattern.MatchString(b.TraceID) {
		t.Errorf("trace_id %q is not a GUID", b.TraceID)
	}
	if !guidPattern.MatchString(b.CorrelationID) {
		t.Errorf("correlation_id %q is not a GUID", b.CorrelationID)
	}
	lines := strings.Split(b.ErrorDescription, "\r\n")
	if len(lines) != 4 {
		t.Fatalf("error_description has %d CRLF-separated lines, want 4: %q", len(lines), b.ErrorDescription)
	}
	if want.aadsts != 0 && !strings.HasPrefix(lines[0], "AADSTS"+strconv.Itoa(want.aadsts)+": ") {
		t.Errorf("description line 1 %q, want AADSTS%d: ...", lines[0], want.aadsts)
	}
	for i, w := range []string{"Trace ID: " + b.TraceID, "Correlation ID: " + b.CorrelationID, "Timestamp: " + stamp} {
		if lines[i+1] != w {
			t.Errorf("description line %d %q, want %q", i+2, lines[i+1], w)
		}
	}
	return b
}

// jwks is the served key set.
type jwks struct {
	Keys []struct {
		Kty string `json:"kty"`
		Use string `json:"use"`
		Kid string `json:"kid"`
		Alg string `json:"alg"`
		N   string `json:"n"`
		E   string `json:"e"`
	} `json:"keys"`
}

// fetchPublicKeys reads the JWKS over HTTP and builds the RSA keys by kid
// from n and e by hand, independently of the sandbox's JOSE library.
func (s *sandbox) fetchPublicKeys(t *testing.T) map[string]*rsa.PublicKey {
	t.Helper()
	rep := s.get(t, "/"+idp.DefaultTenant+"/discovery/v2.0/keys")
	if rep.status != http.StatusOK {
		t.Fatalf("JWKS status %d: %s", rep.status, rep.body)
	}
	var set jwks
	if err := json.Unmarshal(rep.body, &set); err != nil {
		t.Fatalf("JWKS %s: %v", rep.body, err)
	}
	out := make(map[string]*rsa.PublicKey)
	for _, k := range set.Keys {
		if k.Kty != "RSA" || k.Use != "sig" || k.Kid == "" {
			t.Errorf("JWKS key kty=%q use=%q kid=%q, want RSA, sig and a kid", k.Kty, k.Use, k.Kid)
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(n) == 0 || len(e) == 0 {
			t.Fatalf("JWKS key %s: n or e is not base64url: %v %v", k.Kid, err1, err2)
		}
		out[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	}
	return out
}

// segment decodes part i (0 header, 1 payload) of a compact JWT.
func segment(t *testing.T, token string, i int) map[string]json.RawMessage {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[i])
	if err != nil {
		t.Fatalf("token part %d: %v", i, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("token part %d %s: %v", i, b, err)
	}
	return m
}

// sandboxKey is the default signing key parsed by jwx, with kid set when
// not empty, for signing tokens by hand.
func sandboxKey(t *testing.T, kid string) jwk.Key {
	t.Helper()
	key, err := jwk.ParseKey(fixtures.DefaultSigningKeyPEM(), jwk.WithPEM(true))
	if err != nil {
		t.Fatalf("parse signing key: %v", err)
	}
	if kid != "" {
		if err := key.Set(jwk.KeyIDKey, kid); err != nil {
			t.Fatalf("set kid: %v", err)
		}
	}
	return key
}

// signJWS signs claims as a compact JWS with alg and key (a jwk.Key, or
// []byte for HMAC) and the extra protected headers.
func signJWS(t *testing.T, alg jwa.SignatureAlgorithm, key any, claims map[string]any, headers map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatalf("marshal claims: %v", err)
	}
	h := jws.NewHeaders()
	for k, v := range headers {
		if err := h.Set(k, v); err != nil {
			t.Fatalf("set header %s: %v", k, err)
		}
	}
	signed, err := jws.Sign(payload, jws.WithKey(alg, key, jws.WithProtectedHeaders(h)))
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return string(signed)
}

// handClaims are app-only claims like the sandbox's, for sandbox-partner at
// the sandbox time, for tokens signed by hand.
func (s *sandbox) handClaims() map[string]any {
	now := s.clock.Now().Truncate(time.Second)
	return map[string]any{
		"aud": idp.DefaultResource, "iss": issuer(s.server.URL), "azp": partnerID, "azpacr": "1",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"oid": "00000000-0000-0000-0000-000000000001", "sub": "00000000-0000-0000-0000-000000000001",
		"tid": idp.DefaultTenant, "roles": []string{"Trials.Read"}, "ver": "2.0", "uti": "hand", "idtyp": "app",
	}
}

// mustJSON decodes data into v or fails the test.
func mustJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}
