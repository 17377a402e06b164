package openapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// loadDocument parses and validates the embedded document as kin-openapi
// does, failing the test on any error.
func loadDocument(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(Document())
	if err != nil {
		t.Fatalf("load openapi.json: %v", err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	return doc
}

func TestDocumentIsValidOpenAPI303(t *testing.T) {
	doc := loadDocument(t)
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
	}
	if doc.Info.Title != "referrals-sandbox" {
		t.Errorf("info.title = %q, want referrals-sandbox", doc.Info.Title)
	}
	// The interface's release history ends at 1.1.0 (qualified referrals).
	if doc.Info.Version != "1.1.0" {
		t.Errorf("info.version = %q, want 1.1.0", doc.Info.Version)
	}
	for _, want := range []string{"not shown", "sandbox"} {
		if !strings.Contains(doc.Info.Description, want) {
			t.Errorf("info.description does not mention %q", want)
		}
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "http://127.0.0.1:8080" {
		t.Errorf("servers = %v, want exactly http://127.0.0.1:8080", serverURLs(doc.Servers))
	}
}

func serverURLs(servers openapi3.Servers) []string {
	urls := make([]string, 0, len(servers))
	for _, s := range servers {
		urls = append(urls, s.URL)
	}
	return urls
}

// The file is meant to be read and edited by hand: it must stay JSON that
// is pretty-printed with two spaces, exactly as json.Indent lays it out.
func TestDocumentIsPrettyPrinted(t *testing.T) {
	raw := Document()
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, compact.Bytes(), "", "  "); err != nil {
		t.Fatalf("indent: %v", err)
	}
	pretty.WriteByte('\n')
	if !bytes.Equal(pretty.Bytes(), raw) {
		t.Errorf("openapi.json is not laid out as json.Indent with two spaces and a final newline; first difference at byte %d",
			firstDifference(pretty.Bytes(), raw))
	}
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestDocumentReturnsACopy(t *testing.T) {
	first := Document()
	original := bytes.Clone(first)
	for i := range first {
		first[i] = 'x'
	}
	if second := Document(); !bytes.Equal(second, original) {
		t.Fatal("modifying the slice Document returned changed what the next call returns")
	}
}

// operation is one row of the operation table: what api-design.md says an
// operation is, answers and needs.
type operation struct {
	method, path string
	tag          string
	// role is the app role the description must name; "" for none.
	role string
	// public operations need no token (security: []).
	public bool
	// idp operations answer errors with Entra's body, not problem+json.
	idp      bool
	statuses []int
}

var (
	// Every API operation and ping can be forced to answer 401, 403, 429,
	// 500 and 503, and answers 400 to a malformed X-Sandbox-* switch.
	// Every operation also declares 404 and 405: every path answers them.
	apiErrors  = []int{400, 401, 403, 404, 405, 429, 500, 503}
	postErrors = []int{400, 401, 403, 404, 405, 413, 415, 422, 429, 500, 503}
	readErrors = apiErrors
	// The token endpoint answers a wrong method as Entra does, 400
	// AADSTS900561, not 405.
	tokenCodes = []int{200, 400, 401, 404, 413, 429, 500, 503}
)

func with(first int, rest []int) []int { return append([]int{first}, rest...) }

// operations is every operation of api-design.md.
func operations() []operation {
	return []operation{
		{method: "GET", path: "/health/ping", tag: "Health", statuses: with(200, apiErrors)},
		{method: "GET", path: "/api/v1/referrals/trials", tag: "Referrals", role: "Trials.Read", statuses: with(200, apiErrors)},
		{method: "POST", path: "/api/v1/referrals/", tag: "Referrals", role: "Referrals.Write", statuses: append(with(201, postErrors), 507)},
		{method: "POST", path: "/api/v1/referrals", tag: "Referrals", role: "Referrals.Write", statuses: append(with(201, postErrors), 507)},
		{method: "GET", path: "/api/v1/referrals/", tag: "Referrals", role: "Referrals.Read", statuses: with(200, apiErrors)},
		{method: "GET", path: "/api/v1/referrals", tag: "Referrals", role: "Referrals.Read", statuses: with(200, apiErrors)},
		{method: "GET", path: "/api/v1/referrals/{trial_id}/{outcomes_id}", tag: "Referrals", role: "Referrals.Read", statuses: with(200, readErrors)},
		{method: "POST", path: "/api/v1/referrals/qualified", tag: "Qualified referrals", role: "QualifiedReferrals.Write", statuses: []int{201, 400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503, 507}},
		{method: "GET", path: "/api/v1/referrals/qualified", tag: "Qualified referrals", role: "QualifiedReferrals.Read", statuses: append(with(200, apiErrors), 507)},
		{method: "GET", path: "/api/v1/referrals/qualified/{external_source_id}", tag: "Qualified referrals", role: "QualifiedReferrals.Read", statuses: append(with(200, readErrors), 507)},
		{method: "GET", path: "/api/v1/referrals/qualified/{external_source_id}/audit-trail", tag: "Qualified referrals", role: "QualifiedReferrals.Read", statuses: with(200, readErrors)},
		{method: "GET", path: "/api/v1/openapi.json", tag: "Sandbox", public: true, statuses: []int{200, 404, 405, 500}},
		{method: "GET", path: "/__sandbox/health", tag: "Sandbox", public: true, statuses: []int{200, 404, 405, 500, 503}},
		{method: "POST", path: "/{tenant}/oauth2/v2.0/token", tag: "Identity provider", public: true, idp: true, statuses: tokenCodes},
		{method: "POST", path: "/oauth2/v2.0/token", tag: "Identity provider", public: true, idp: true, statuses: tokenCodes},
		{method: "GET", path: "/{tenant}/discovery/v2.0/keys", tag: "Identity provider", public: true, idp: true, statuses: []int{200, 400, 404, 405}},
		{method: "GET", path: "/{tenant}/v2.0/.well-known/openid-configuration", tag: "Identity provider", public: true, idp: true, statuses: []int{200, 400, 404, 405}},
		{method: "GET", path: "/common/discovery/instance", tag: "Identity provider", public: true, idp: true, statuses: []int{200, 400, 404, 405}},
	}
}

func TestEveryOperationIsDocumented(t *testing.T) {
	doc := loadDocument(t)
	for _, want := range operations() {
		t.Run(want.method+" "+want.path, func(t *testing.T) {
			item := doc.Paths.Value(want.path)
			if item == nil {
				t.Fatalf("path %s is missing", want.path)
			}
			op := item.GetOperation(want.method)
			if op == nil {
				t.Fatalf("%s %s is missing; the path has %v", want.method, want.path, methodsOf(item))
			}
			if op.OperationID == "" {
				t.Error("no operationId")
			}
			if strings.TrimSpace(op.Summary) == "" {
				t.Error("no summary")
			}
			if strings.TrimSpace(op.Description) == "" {
				t.Error("no description")
			}
			if !slices.Equal(op.Tags, []string{want.tag}) {
				t.Errorf("tags = %v, want [%s]", op.Tags, want.tag)
			}
			if !strings.Contains(op.Description, "Required role:") {
				t.Error("the description does not state the required role")
			}
			if want.role != "" && !strings.Contains(op.Description, "`"+want.role+"`") {
				t.Errorf("the description does not name the role %s", want.role)
			}
			if got := statusesOf(op); !slices.Equal(got, want.statuses) {
				t.Errorf("responses = %v, want %v", got, want.statuses)
			}
			switch {
			case want.public && (op.Security == nil || len(*op.Security) != 0):
				t.Error("a public operation must set security: [] (no token)")
			case !want.public && op.Security != nil:
				t.Errorf("an API operation must use the global security, has its own %v", *op.Security)
			}
		})
	}
}

func methodsOf(item *openapi3.PathItem) []string {
	var methods []string
	for m := range item.Operations() {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	return methods
}

func statusesOf(op *openapi3.Operation) []int {
	var codes []int
	for key := range op.Responses.Map() {
		code, err := strconv.Atoi(key)
		if err != nil {
			code = -1 // "default" or a range: not expected in this document
		}
		codes = append(codes, code)
	}
	sort.Ints(codes)
	return codes
}

// The table above must be complete: an operation added to the document
// without a row would escape every check.
func TestNoOperationOutsideTheTable(t *testing.T) {
	doc := loadDocument(t)
	known := map[string]bool{}
	for _, o := range operations() {
		known[o.method+" "+o.path] = true
	}
	ids := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if !known[method+" "+path] {
				t.Errorf("%s %s is in the document but not in the test's operation table", method, path)
			}
			if ids[op.OperationID] {
				t.Errorf("operationId %s is used twice", op.OperationID)
			}
			ids[op.OperationID] = true
		}
	}
}

// Tests that expect 404 for unknown ids send malformed ids too; a pattern on
// a path parameter would make such requests fail request validation.
func TestPathParametersHaveNoPattern(t *testing.T) {
	doc := loadDocument(t)
	for path, item := range doc.Paths.Map() {
		for _, p := range item.Parameters {
			if p.Value.In == openapi3.ParameterInPath && p.Value.Schema.Value.Pattern != "" {
				t.Errorf("%s: path parameter %s has pattern %q", path, p.Value.Name, p.Value.Schema.Value.Pattern)
			}
		}
		for method, op := range item.Operations() {
			for _, p := range op.Parameters {
				if p.Value.In == openapi3.ParameterInPath && p.Value.Schema.Value.Pattern != "" {
					t.Errorf("%s %s: path parameter %s has pattern %q", method, path, p.Value.Name, p.Value.Schema.Value.Pattern)
				}
			}
		}
	}
}

func TestResponsesCarryTheDocumentedHeadersAndBodies(t *testing.T) {
	doc := loadDocument(t)
	for _, o := range operations() {
		op := doc.Paths.Value(o.path).GetOperation(o.method)
		if op == nil {
			continue // reported by TestEveryOperationIsDocumented
		}
		for _, code := range o.statuses {
			r := op.Responses.Status(code)
			if r == nil {
				continue // reported by TestEveryOperationIsDocumented
			}
			name := o.method + " " + o.path + " " + strconv.Itoa(code)
			checkResponse(t, name, o, code, r.Value)
		}
	}
}

func checkResponse(t *testing.T, name string, o operation, code int, r *openapi3.Response) {
	t.Helper()
	requireHeader(t, name, r, "X-Request-Id", true)
	if code == http.StatusNotFound || code == http.StatusMethodNotAllowed {
		return // the shared NotFound and MethodNotAllowed responses; see TestEveryOperationDeclaresNotFoundAndMethodNotAllowed
	}
	switch {
	case code == http.StatusCreated:
		requireHeader(t, name, r, "Location", true)
		requireHeader(t, name, r, "Sandbox-Warning", false)
	case code == http.StatusConflict:
		requireHeader(t, name, r, "Location", true)
	case code == http.StatusUnauthorized && !o.idp:
		requireHeader(t, name, r, "WWW-Authenticate", true)
	case code == http.StatusForbidden:
		requireHeader(t, name, r, "WWW-Authenticate", false)
	case code == http.StatusTooManyRequests && o.idp:
		// Entra's throttling answer: Retry-After and a plain-text body,
		// no rate-limit headers (the token endpoint has no budget).
		requireHeader(t, name, r, "Retry-After", true)
		if mt := r.Content["text/plain"]; len(r.Content) != 1 || mt == nil {
			t.Errorf("%s: want a text/plain body only", name)
		}
		return
	case code == http.StatusTooManyRequests:
		requireHeader(t, name, r, "Retry-After", true)
		for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
			requireHeader(t, name, r, h, false)
		}
	case code == http.StatusServiceUnavailable && !o.idp:
		requireHeader(t, name, r, "Retry-After", false)
	case code == http.StatusOK && o.method == "POST" && o.idp:
		requireHeader(t, name, r, "Cache-Control", true)
	}

	// One media type each: the token endpoint answers even a bad sandbox
	// switch header with Entra's error body, never problem+json.
	if len(r.Content) != 1 {
		t.Errorf("%s: want 1 media type, got %d", name, len(r.Content))
	}
	var wantType, wantSchema string
	switch {
	case code < 400:
		return // success bodies differ per operation; their schemas are checked below
	case o.idp:
		wantType, wantSchema = "application/json", "#/components/schemas/TokenError"
	case o.path == "/__sandbox/health" && code == http.StatusServiceUnavailable:
		// Health checkers read {"status": ...} whatever the status (issue #16).
		wantType, wantSchema = "application/json", "#/components/schemas/HealthDegraded"
	default:
		wantType, wantSchema = "application/problem+json", "#/components/schemas/Problem"
	}
	mt := r.Content[wantType]
	if mt == nil || mt.Schema == nil {
		t.Errorf("%s: no %s body", name, wantType)
		return
	}
	if mt.Schema.Ref != wantSchema {
		t.Errorf("%s: %s body is %q, want %s", name, wantType, mt.Schema.Ref, wantSchema)
	}
}

// requireHeader checks that r documents header, marked required or not.
func requireHeader(t *testing.T, name string, r *openapi3.Response, header string, required bool) {
	t.Helper()
	h := r.Headers[header]
	switch {
	case h == nil:
		t.Errorf("%s: header %s is not documented", name, header)
	case h.Value.Required != required:
		t.Errorf("%s: header %s required = %v, want %v", name, header, h.Value.Required, required)
	}
}

func TestUnknownRouteResponsesAreDocumented(t *testing.T) {
	doc := loadDocument(t)
	for _, tc := range []struct {
		name, header string
	}{
		{"NotFound", "X-Request-Id"},
		{"MethodNotAllowed", "Allow"},
	} {
		r := doc.Components.Responses[tc.name]
		if r == nil {
			t.Errorf("components.responses.%s is missing", tc.name)
			continue
		}
		requireHeader(t, tc.name, r.Value, tc.header, true)
		if r.Value.Content["application/problem+json"] == nil {
			t.Errorf("components.responses.%s has no application/problem+json body", tc.name)
		}
	}
}

func TestSecuritySchemes(t *testing.T) {
	doc := loadDocument(t)
	bearer := doc.Components.SecuritySchemes["bearer"]
	if bearer == nil || bearer.Value.Type != "http" || bearer.Value.Scheme != "bearer" || bearer.Value.BearerFormat != "JWT" {
		t.Errorf("securitySchemes.bearer must be http/bearer/JWT, is %+v", bearer)
	}
	oauth := doc.Components.SecuritySchemes["oauth2"]
	if oauth == nil || oauth.Value.Flows == nil || oauth.Value.Flows.ClientCredentials == nil {
		t.Fatal("securitySchemes.oauth2 with a clientCredentials flow is missing")
	}
	cc := oauth.Value.Flows.ClientCredentials
	if want := "http://127.0.0.1:8080/5f0a9c4e-3b1d-4e8a-9c27-0d1e2f3a4b5c/oauth2/v2.0/token"; cc.TokenURL != want {
		t.Errorf("tokenUrl = %q, want %q", cc.TokenURL, want)
	}
	if _, ok := cc.Scopes["api://referrals-sandbox/.default"]; !ok {
		t.Errorf("scopes = %v, want api://referrals-sandbox/.default", cc.Scopes)
	}
	var schemes []string
	for _, req := range doc.Security {
		for name := range req {
			schemes = append(schemes, name)
		}
	}
	sort.Strings(schemes)
	if !slices.Equal(schemes, []string{"bearer", "oauth2"}) {
		t.Errorf("global security uses %v, want bearer or oauth2", schemes)
	}
}

// The enums must list exactly the values the referrals package defines, in
// its order, so documentation and data cannot drift apart.
func TestEnumsMatchTheReferralsPackage(t *testing.T) {
	doc := loadDocument(t)
	schemas := doc.Components.Schemas
	if got := enumOf(schemas["Status"].Value); !slices.Equal(got, referrals.Statuses()) {
		t.Errorf("Status enum = %v, want %v", got, referrals.Statuses())
	}
	actions := []string{referrals.AuditSubmitted, referrals.AuditViewed, referrals.AuditStatusChanged}
	if got := enumOf(schemas["AuditEntry"].Value.Properties["action"].Value); !slices.Equal(got, actions) {
		t.Errorf("AuditEntry.action enum = %v, want %v", got, actions)
	}
	genders := []string{"female", "male", "other", "unknown"}
	if got := enumOf(schemas["Patient"].Value.Properties["gender"].Value); !slices.Equal(got, genders) {
		t.Errorf("Patient.gender enum = %v, want %v", got, genders)
	}
}

func enumOf(s *openapi3.Schema) []string {
	values := make([]string, 0, len(s.Enum))
	for _, v := range s.Enum {
		str, _ := v.(string)
		values = append(values, str)
	}
	return values
}

// The default fixtures are what the sandbox serves out of the box; every
// record must satisfy the response schemas, or the contract tests of the
// server would fail on the seed data.
func TestDefaultFixturesConformToTheSchemas(t *testing.T) {
	doc := loadDocument(t)
	set, err := fixtures.Default()
	if err != nil {
		t.Fatalf("default fixtures: %v", err)
	}
	if len(set.Trials) == 0 || len(set.Referrals) == 0 || len(set.QualifiedReferrals) == 0 {
		t.Fatal("the default fixtures are empty; this test would prove nothing")
	}
	for i, tr := range set.Trials {
		checkValue(t, doc, "Trial", "trials.json #"+strconv.Itoa(i), tr, true)
	}
	for i, r := range set.Referrals {
		checkValue(t, doc, "Referral", "referrals.json #"+strconv.Itoa(i), r, true)
	}
	for i, q := range set.QualifiedReferrals {
		checkValue(t, doc, "QualifiedReferral", "qualified-referrals.json #"+strconv.Itoa(i), q, true)
	}
}

// checkValue validates v, as JSON, against a component schema, and fails
// unless the outcome is wantValid.
func checkValue(t *testing.T, doc *openapi3.T, schema, name string, v any, wantValid bool) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: marshal: %v", name, err)
	}
	var value any
	if err := json.Unmarshal(raw, &value); err != nil {
		t.Fatalf("%s: unmarshal: %v", name, err)
	}
	ref := doc.Components.Schemas[schema]
	if ref == nil {
		t.Fatalf("components.schemas.%s is missing", schema)
	}
	err = ref.Value.VisitJSON(value, openapi3.MultiErrors())
	switch {
	case wantValid && err != nil:
		t.Errorf("%s does not conform to %s: %v", name, schema, err)
	case !wantValid && err == nil:
		t.Errorf("%s conforms to %s, but the schema should reject it: %s", name, schema, raw)
	}
}

// The schemas must be strict where api-design.md is, or the contract tests
// would let a drifting server through.
func TestSchemasAcceptAndReject(t *testing.T) {
	doc := loadDocument(t)
	patient := func(change func(map[string]any)) map[string]any {
		p := map[string]any{"firstName": "Ada", "lastName": "Lovelace", "dateOfBirth": "1990-12-10", "gender": "female",
			"email": "ada@example.com", "phone": "+14155550123", "postalCode": "SW1A 1AA"}
		if change != nil {
			change(p)
		}
		return p
	}
	referral := func(change func(map[string]any)) map[string]any {
		r := map[string]any{"trialId": "TRIAL-CARDIO-001", "outcomesId": "9635e059-4979-40b3-ba80-bba16cb9e0ed",
			"clientId": "sandbox-partner", "status": "received", "submittedAt": "2026-11-21T14:03:07.123456Z", "patient": patient(nil)}
		if change != nil {
			change(r)
		}
		return r
	}
	tests := []struct {
		name   string
		schema string
		value  any
		valid  bool
	}{
		{"full patient", "Patient", patient(nil), true},
		{"patient with unknown field", "Patient", patient(func(p map[string]any) { p["nickname"] = "A" }), true},
		{"gender not lowercase", "Patient", patient(func(p map[string]any) { p["gender"] = "Female" }), false},
		{"gender abbreviated", "Patient", patient(func(p map[string]any) { p["gender"] = "F" }), false},
		{"dateOfBirth US format", "Patient", patient(func(p map[string]any) { p["dateOfBirth"] = "12/10/1990" }), false},
		{"dateOfBirth with time", "Patient", patient(func(p map[string]any) { p["dateOfBirth"] = "1990-12-10T00:00:00Z" }), false},
		{"phone not E.164", "Patient", patient(func(p map[string]any) { p["phone"] = "415-555-0123" }), false},
		{"phone leading zero", "Patient", patient(func(p map[string]any) { p["phone"] = "+04155550123" }), false},
		{"firstName too long", "Patient", patient(func(p map[string]any) { p["firstName"] = strings.Repeat("a", 101) }), false},
		{"firstName 100 chars", "Patient", patient(func(p map[string]any) { p["firstName"] = strings.Repeat("a", 100) }), true},
		{"lastName missing", "Patient", patient(func(p map[string]any) { delete(p, "lastName") }), false},
		{"referral", "Referral", referral(nil), true},
		{"referral status unknown", "Referral", referral(func(r map[string]any) { r["status"] = "done" }), false},
		{"referral outcomesId uppercase", "Referral", referral(func(r map[string]any) { r["outcomesId"] = "9635E059-4979-40B3-BA80-BBA16CB9E0ED" }), false},
		{"referral submittedAt 3 digits", "Referral", referral(func(r map[string]any) { r["submittedAt"] = "2026-11-21T14:03:07.123Z" }), false},
		{"referral submittedAt offset", "Referral", referral(func(r map[string]any) { r["submittedAt"] = "2026-11-21T14:03:07.123456+00:00" }), false},
		{"referral without clientId", "Referral", referral(func(r map[string]any) { delete(r, "clientId") }), false},
		{"last page", "ReferralsPage", map[string]any{"referrals": []any{}, "nextCursor": nil}, true},
		{"page with cursor", "ReferralsPage", map[string]any{"referrals": []any{referral(nil)}, "nextCursor": "abc"}, true},
		{"page without nextCursor", "ReferralsPage", map[string]any{"referrals": []any{}}, false},
		{"ping", "Ping", map[string]any{"message": "pong", "timestamp": "2026-11-21T14:03:07.123456+00:00"}, true},
		{"ping in Z", "Ping", map[string]any{"message": "pong", "timestamp": "2026-11-21T14:03:07.123456Z"}, false},
		{"ping without fraction", "Ping", map[string]any{"message": "pong", "timestamp": "2026-11-21T14:03:07+00:00"}, false},
		{"ping wrong message", "Ping", map[string]any{"message": "ping", "timestamp": "2026-11-21T14:03:07.123456+00:00"}, false},
		{"problem", "Problem", map[string]any{"type": "urn:referrals-sandbox:problem:not-found", "title": "Not Found", "status": 404}, true},
		{"problem with errors", "Problem", map[string]any{"type": "urn:referrals-sandbox:problem:bad-request", "title": "Bad Request", "status": 400,
			"errors": []any{map[string]any{"field": "limit", "message": "must be 1 to 500"}}}, true},
		{"problem without title", "Problem", map[string]any{"type": "urn:referrals-sandbox:problem:not-found", "status": 404}, false},
		{"problem with 2xx status", "Problem", map[string]any{"type": "about:blank", "title": "OK", "status": 200}, false},
		{"problem error without message", "Problem", map[string]any{"type": "t", "title": "Bad Request", "status": 400,
			"errors": []any{map[string]any{"field": "limit"}}}, false},
		{"qualified request", "QualifiedReferralRequest", map[string]any{"externalSourceId": "case:42", "patient": patient(nil)}, true},
		{"qualified request bad id", "QualifiedReferralRequest", map[string]any{"externalSourceId": "case 42", "patient": patient(nil)}, false},
		{"qualified request lower country", "QualifiedReferralRequest", map[string]any{"externalSourceId": "c", "patient": patient(nil),
			"address": map[string]any{"country": "us"}}, false},
		{"qualified request coding without code", "QualifiedReferralRequest", map[string]any{"externalSourceId": "c", "patient": patient(nil),
			"conditions": []any{map[string]any{"display": "asthma"}}}, false},
		{"audit action unknown", "AuditEntry", map[string]any{"at": "2026-11-21T14:03:07.123456Z", "action": "deleted", "actor": "x"}, false},
		{"token response", "TokenResponse", map[string]any{"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": "a.b.c"}, true},
		{"token response not a JWT", "TokenResponse", map[string]any{"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": "opaque"}, false},
		{"token error RFC 3339 timestamp", "TokenError", map[string]any{"error": "invalid_client", "error_description": "d", "error_codes": []any{7000215},
			"timestamp": "2026-11-21T14:03:07Z", "trace_id": "t", "correlation_id": "c"}, false},
		{"token error", "TokenError", map[string]any{"error": "invalid_client", "error_description": "d", "error_codes": []any{7000215},
			"timestamp": "2026-11-21 14:03:07Z", "trace_id": "t", "correlation_id": "c"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkValue(t, doc, tc.schema, tc.name, tc.value, tc.valid)
		})
	}
}
