package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// Shapes a partner's code relies on.
var (
	// guidRE is a lowercase GUID, as outcomesId and generated request ids are.
	guidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	// submittedAtRE is a stored timestamp: UTC, Z, six fraction digits.
	submittedAtRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$`)
	// pingTimestampRE is the ping's timestamp: +00:00, six fraction digits.
	pingTimestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$`)
)

// Records of sandbox-partner in fixtures/default, which the API tests read.
const (
	fixtureTrialID    = "TRIAL-ONCO-002"
	fixtureOutcomesID = "9635e059-4979-40b3-ba80-bba16cb9e0ed"
	fixtureSourceID   = "src-b659f7ea79aaa166"
	// fixtureReferrals and fixtureQualified count sandbox-partner's records.
	fixtureReferrals = 8
	fixtureQualified = 4
)

// referralBody is a referral submission every rule accepts.
func referralBody(trialID string) map[string]any {
	return map[string]any{"trialId": trialID, "patient": validPatient(), "notes": "prefers mornings"}
}

// qualifiedBody is a qualified referral submission every rule accepts.
func qualifiedBody(externalSourceID string) map[string]any {
	return map[string]any{"externalSourceId": externalSourceID, "patient": validPatient()}
}

// createReferral submits body as the token's client and returns the stored
// referral, failing the test unless it is created.
func (s *testSandbox) createReferral(token string, body any) (referrals.Referral, *response) {
	s.t.Helper()
	r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, body: body})
	if r.Status != http.StatusCreated {
		s.t.Fatalf("create referral: %d %s", r.Status, r.Body)
	}
	var ref referrals.Referral
	r.decode(s.t, &ref)
	return ref, r
}

// createQualified submits a valid qualified referral with that id and
// returns it, failing the test unless it is created.
func (s *testSandbox) createQualified(token, externalSourceID string) (referrals.QualifiedReferral, *response) {
	s.t.Helper()
	r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: qualifiedBody(externalSourceID)})
	if r.Status != http.StatusCreated {
		s.t.Fatalf("create qualified referral %q: %d %s", externalSourceID, r.Status, r.Body)
	}
	var q referrals.QualifiedReferral
	r.decode(s.t, &q)
	return q, r
}

// noRedirect returns a view of s whose contract-checked client returns a
// redirect as the response instead of following it, so a test sees a 3xx.
func (s *testSandbox) noRedirect() *testSandbox {
	c := *s.client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	view := *s
	view.client = &c
	return &view
}

// setClock sets the sandbox clock through the admin API.
func (s *testSandbox) setClock(at time.Time) {
	s.t.Helper()
	if r := s.admin(http.MethodPost, "/__sandbox/clock", map[string]string{"set": at.Format(time.RFC3339)}); r.Status != http.StatusOK {
		s.t.Fatalf("set clock: %d %s", r.Status, r.Body)
	}
}

// useStore makes the sandbox keep its records in st instead of the
// harness's in-memory store, which it closes.
func useStore(st store.Store) sandboxOption {
	return func(cfg *sandboxConfig) {
		_ = cfg.Store.Close() // the unused in-memory store; nothing to lose
		cfg.Store = st
	}
}

// wantProblem checks that r is a problem+json of that status and type.
func wantProblem(t *testing.T, r *response, status int, problemType string) sandbox.Problem {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	p := r.problem(t)
	if p.Type != problemType {
		t.Errorf("problem type %q, want %q", p.Type, problemType)
	}
	if p.Title != http.StatusText(status) {
		t.Errorf("problem title %q, want %q", p.Title, http.StatusText(status))
	}
	if id := r.Header.Get("X-Request-Id"); p.TraceID != id {
		t.Errorf("problem traceId %q, X-Request-Id %q: they should be the same", p.TraceID, id)
	}
	return p
}

// errorFields lists the fields of a problem's errors, in order.
func errorFields(p sandbox.Problem) []string {
	fields := make([]string, len(p.Errors))
	for i, e := range p.Errors {
		fields[i] = e.Field
	}
	return fields
}

// wantFieldError checks that p lists exactly one error, on field, whose
// message contains every one of words.
func wantFieldError(t *testing.T, p sandbox.Problem, field string, words ...string) {
	t.Helper()
	if len(p.Errors) != 1 || p.Errors[0].Field != field {
		t.Fatalf("errors on %q, want exactly one on %q: %+v", errorFields(p), field, p.Errors)
	}
	for _, w := range words {
		if !strings.Contains(p.Errors[0].Message, w) {
			t.Errorf("message for %s is %q; it should mention %q", field, p.Errors[0].Message, w)
		}
	}
}

// challenge parses a WWW-Authenticate header of one challenge, e.g.
// `Bearer realm="x", error="invalid_token"`, into its scheme and
// parameters. Quoted values may hold backslash escapes (RFC 9110).
func challenge(t *testing.T, header string) (scheme string, params map[string]string) {
	t.Helper()
	scheme, rest, _ := strings.Cut(header, " ")
	params = map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; {
		name, after, ok := strings.Cut(rest, "=")
		if !ok || !strings.HasPrefix(after, `"`) {
			t.Fatalf("WWW-Authenticate %q: cannot parse at %q", header, rest)
		}
		var value strings.Builder
		i := 1
		for ; i < len(after) && after[i] != '"'; i++ {
			if after[i] == '\\' && i+1 < len(after) {
				i++
			}
			value.WriteByte(after[i])
		}
		if i == len(after) {
			t.Fatalf("WWW-Authenticate %q: unterminated quoted value", header)
		}
		params[strings.TrimSpace(name)] = value.String()
		rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(after[i+1:]), ","))
	}
	return scheme, params
}

// rfc6750Text reports whether s uses only the characters RFC 6750 section 3
// allows in error_description and scope: printable ASCII except '"' and '\'.
func rfc6750Text(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// wantChallenge checks a Bearer challenge with that error code, and returns
// its parameters.
func wantChallenge(t *testing.T, r *response, errorCode string) map[string]string {
	t.Helper()
	header := r.Header.Get("WWW-Authenticate")
	scheme, params := challenge(t, header)
	if scheme != "Bearer" || params["realm"] != "referrals-sandbox" || params["error"] != errorCode {
		t.Errorf("WWW-Authenticate %q, want a Bearer challenge, realm referrals-sandbox, error %q", header, errorCode)
	}
	if d := params["error_description"]; d == "" || !rfc6750Text(d) {
		t.Errorf("error_description %q: want a description of printable ASCII without '\"' or '\\' (RFC 6750 section 3)", d)
	}
	return params
}

// fetchedPage is one page of either listing, with each record's id.
type fetchedPage struct {
	ids        []string
	records    []json.RawMessage
	nextCursor *string
	response   *response
}

// apiList names the JSON members of one kind of listing.
type apiList struct {
	path  string // the list's path
	items string // the member holding the records
	id    string // each record's identifier member
}

var (
	referralsList = apiList{path: "/api/v1/referrals/", items: "referrals", id: "outcomesId"}
	qualifiedList = apiList{path: "/api/v1/referrals/qualified", items: "qualifiedReferrals", id: "externalSourceId"}
)

// fetchPage fetches one page of l with the raw query (e.g. "limit=5"),
// failing the test unless it is a 200.
func (s *testSandbox) fetchPage(l apiList, token, query string) fetchedPage {
	s.t.Helper()
	path := l.path
	if query != "" {
		path += "?" + query
	}
	r := s.do(request{path: path, token: token})
	if r.Status != http.StatusOK {
		s.t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var body map[string]json.RawMessage
	r.decode(s.t, &body)
	p := fetchedPage{response: r}
	if string(body[l.items]) == "null" || body[l.items] == nil {
		s.t.Fatalf("GET %s: %q is %s, want an array", path, l.items, body[l.items])
	}
	if err := json.Unmarshal(body[l.items], &p.records); err != nil {
		s.t.Fatalf("GET %s: %s: %v", path, l.items, err)
	}
	cursor, ok := body["nextCursor"]
	if !ok {
		s.t.Fatalf("GET %s: no nextCursor member (null expected on the last page): %s", path, r.Body)
	}
	if err := json.Unmarshal(cursor, &p.nextCursor); err != nil {
		s.t.Fatalf("GET %s: nextCursor %s: %v", path, cursor, err)
	}
	for _, rec := range p.records {
		var ids map[string]any
		if err := json.Unmarshal(rec, &ids); err != nil {
			s.t.Fatal(err)
		}
		p.ids = append(p.ids, fmt.Sprint(ids[l.id]))
	}
	return p
}

// reversed returns a reversed copy of ids: creation order to newest first.
func reversed(ids []string) []string {
	r := slices.Clone(ids)
	slices.Reverse(r)
	return r
}
