package drift

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// probe is one request drift sends to both sides, built per side from that
// side's addresses, credentials and earlier answers.
type probe struct {
	name string
	// kind says how its answers are compared besides status, headers and
	// body shape.
	kind probeKind
	// build returns the request for one side, or a reason to skip the
	// probe on both.
	build func(s *side) (request, string)
	// after reads the answer for later probes (the id of a submission).
	after func(s *side, a answer)
}

type probeKind int

const (
	apiProbe probeKind = iota
	tokenProbe
	tokenErrorProbe
)

// unknownTrial and unknownOutcome are ids no service should hold.
const (
	unknownTrial    = "DRIFT-NO-SUCH-TRIAL"
	unknownOutcome  = "00000000-0000-4000-8000-000000000000"
	unknownExternal = "drift-no-such-referral"
)

// tokenForm is a client-credentials form for creds, with changes applied.
func tokenForm(c Credentials, change func(url.Values)) []byte {
	f := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {c.ClientID},
		"client_secret": {c.ClientSecret},
		"scope":         {c.Scope},
	}
	if change != nil {
		change(f)
	}
	return []byte(f.Encode())
}

func formRequest(s *side, body []byte) request {
	return request{method: http.MethodPost, url: s.tokenURL(), body: body,
		header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}}
}

// tokenProbes are the token request and each documented token error, plus
// malformed forms.
func tokenProbes() []probe {
	errorProbe := func(name string, body func(s *side) []byte, contentType string) probe {
		return probe{name: name, kind: tokenErrorProbe, build: func(s *side) (request, string) {
			r := formRequest(s, body(s))
			if contentType != "" {
				r.header.Set("Content-Type", contentType)
			}
			return r, ""
		}}
	}
	form := func(change func(url.Values)) func(s *side) []byte {
		return func(s *side) []byte { return tokenForm(s.target.Credentials, change) }
	}
	return []probe{
		{name: "token", kind: tokenProbe, build: func(s *side) (request, string) {
			return formRequest(s, tokenForm(s.target.Credentials, nil)), ""
		}},
		errorProbe("token.wrong-secret", form(func(f url.Values) { f.Set("client_secret", "drift-wrong-secret") }), ""),
		errorProbe("token.unknown-scope", form(func(f url.Values) { f.Set("scope", "api://drift-no-such-api/.default") }), ""),
		errorProbe("token.wrong-grant-type", form(func(f url.Values) { f.Set("grant_type", "password") }), ""),
		errorProbe("token.missing-grant-type", form(func(f url.Values) { f.Del("grant_type") }), ""),
		errorProbe("token.missing-client-id", form(func(f url.Values) { f.Del("client_id") }), ""),
		errorProbe("token.empty-form", func(*side) []byte { return []byte{} }, ""),
		errorProbe("token.json-body", func(*side) []byte { return []byte(`{"grant_type":"client_credentials"}`) }, "application/json"),
		// Where the interface is silent, the sandbox answers as Entra does
		// (docs/identity-provider.md); these show where it no longer does.
		errorProbe("token.missing-client-secret", form(func(f url.Values) { f.Del("client_secret") }), ""),
		errorProbe("token.scope-without-default", form(func(f url.Values) { f.Set("scope", strings.TrimSuffix(f.Get("scope"), "/.default")) }), ""),
		errorProbe("token.scope-openid", form(func(f url.Values) { f.Set("scope", "openid") }), ""),
		errorProbe("token.repeated-scope", func(s *side) []byte {
			c := s.target.Credentials
			return append(tokenForm(c, nil), "&scope="+url.QueryEscape(c.Scope)...)
		}, ""),
		{name: "token.unknown-tenant", kind: tokenErrorProbe, build: func(s *side) (request, string) {
			u, skip := s.tokenURLOfTenant(unknownTenant)
			r := formRequest(s, tokenForm(s.target.Credentials, nil))
			r.url = u
			return r, skip
		}},
		{name: "token.get", kind: tokenErrorProbe, build: func(s *side) (request, string) {
			return request{method: http.MethodGet, url: s.tokenURL()}, ""
		}},
		{name: "token.preflight", kind: apiProbe, build: func(s *side) (request, string) {
			return request{method: http.MethodOptions, url: s.tokenURL(), header: http.Header{
				"Origin":                         {"https://drift.example.test"},
				"Access-Control-Request-Method":  {http.MethodPost},
				"Access-Control-Request-Headers": {"content-type"},
			}}, ""
		}},
	}
}

// unknownTenant is a tenant GUID no identity provider should know.
const unknownTenant = "00000000-0000-4000-8000-00000000d71f"

// operation is one API operation a partner calls.
type operation struct {
	name   string
	method string
	// path is under the base URL (or the root URL when root is set).
	path string
	root bool
	body []byte
}

// operations are every operation of the interface, reading unknown ids
// where an id is needed. The POST bodies are empty objects: without a valid
// token nothing is stored, and with one they fail validation.
var operations = []operation{
	{name: "ping", method: http.MethodGet, path: "/health/ping", root: true},
	{name: "trials-list", method: http.MethodGet, path: "/referrals/trials"},
	{name: "referrals-list", method: http.MethodGet, path: "/referrals/"},
	{name: "referral-read", method: http.MethodGet, path: "/referrals/" + unknownTrial + "/" + unknownOutcome},
	{name: "referral-submit", method: http.MethodPost, path: "/referrals/", body: []byte(`{}`)},
	{name: "qualified-list", method: http.MethodGet, path: "/referrals/qualified"},
	{name: "qualified-read", method: http.MethodGet, path: "/referrals/qualified/" + unknownExternal},
	{name: "qualified-submit", method: http.MethodPost, path: "/referrals/qualified", body: []byte(`{}`)},
}

func (s *side) apiRequest(method, path string, root bool, body []byte, token string) request {
	base := s.baseURL()
	if root {
		base = s.rootURL()
	}
	h := http.Header{}
	// Client examples send Content-Type: application/json on GETs too.
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return request{method: method, url: base + path, header: h, body: body}
}

// readProbes are the read-only probes with the partner's token, then every
// operation with each kind of bad token, then unknown paths and methods.
func readProbes() []probe {
	withToken := func(name, method, path string, root bool) probe {
		return probe{name: name, build: func(s *side) (request, string) {
			return s.apiRequest(method, path, root, nil, s.token), ""
		}}
	}
	probes := []probe{
		withToken("ping", http.MethodGet, "/health/ping", true),
		withToken("trials-list", http.MethodGet, "/referrals/trials", false),
		withToken("referrals-list", http.MethodGet, "/referrals/", false),
		withToken("referrals-list.paged", http.MethodGet, "/referrals/?limit=1", false),
		withToken("referrals-list.bad-limit", http.MethodGet, "/referrals/?limit=0", false),
		withToken("qualified-list", http.MethodGet, "/referrals/qualified", false),
		withToken("qualified-list.paged", http.MethodGet, "/referrals/qualified?limit=1", false),
		withToken("qualified-list.bad-cursor", http.MethodGet, "/referrals/qualified?cursor=drift-not-a-cursor", false),
		withToken("referral-read.unknown", http.MethodGet, "/referrals/"+unknownTrial+"/"+unknownOutcome, false),
		withToken("qualified-read.unknown", http.MethodGet, "/referrals/qualified/"+unknownExternal, false),
	}
	badTokens := []struct {
		suffix string
		token  func(s *side) (string, string)
	}{
		{"no-token", func(*side) (string, string) { return "", "" }},
		{"garbled-token", func(*side) (string, string) { return "drift.garbled.token", "" }},
		{"other-audience", func(s *side) (string, string) { return s.otherAudience, s.otherAudienceSkip }},
		{"expired-token", func(s *side) (string, string) { return s.expired, s.expiredSkip }},
	}
	for _, bt := range badTokens {
		for _, op := range operations {
			probes = append(probes, probe{name: op.name + "." + bt.suffix, build: func(s *side) (request, string) {
				token, skip := bt.token(s)
				if skip != "" {
					return request{}, skip
				}
				r := s.apiRequest(op.method, op.path, op.root, op.body, token)
				if token == "" {
					r.header.Del("Authorization")
				}
				return r, ""
			}})
		}
	}
	return append(probes,
		withToken("unknown-path", http.MethodGet, "/drift-no-such-path", false),
		withToken("unknown-path.root", http.MethodGet, "/drift-no-such-path", true),
		withToken("unknown-method.ping", http.MethodDelete, "/health/ping", true),
		withToken("unknown-method.trials-list", http.MethodPut, "/referrals/trials", false),
	)
}

// idFrom reads a string member of a JSON answer, "" when absent.
func idFrom(a answer, member string) string {
	var v map[string]any
	if json.Unmarshal(a.body, &v) != nil {
		return ""
	}
	id, _ := v[member].(string)
	return strings.TrimSpace(id)
}
