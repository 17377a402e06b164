package sandbox_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// The black-box tests of the referrals API: every operation and status over
// real HTTP, each exchange checked against the OpenAPI document by the
// harness client. Validation rules, listings, partner isolation and --data
// persistence have their own files.

// apiOperation is one operation of the API with a request that succeeds
// for a caller holding the role.
type apiOperation struct {
	name   string
	method string
	path   string
	body   any
	role   string // "" for the ping: any role will do
	// readonly is what sandbox-readonly (every Read role, no Write role)
	// gets: 200, 403 on writes, 404 reading a record that is not its own.
	readonly int
}

func apiOperations() []apiOperation {
	get, post := http.MethodGet, http.MethodPost
	return []apiOperation{
		{"ping", get, "/health/ping", nil, "", http.StatusOK},
		{"list trials", get, "/api/v1/referrals/trials", nil, sandbox.RoleTrialsRead, http.StatusOK},
		{"submit referral", post, "/api/v1/referrals/", referralBody("TRIAL-CARDIO-001"), sandbox.RoleReferralsWrite, http.StatusForbidden},
		{"list referrals", get, "/api/v1/referrals/", nil, sandbox.RoleReferralsRead, http.StatusOK},
		{"get referral", get, "/api/v1/referrals/" + fixtureTrialID + "/" + fixtureOutcomesID, nil, sandbox.RoleReferralsRead, http.StatusNotFound},
		{"submit qualified referral", post, "/api/v1/referrals/qualified", qualifiedBody("auth-probe"), sandbox.RoleQualifiedReferralsWrite, http.StatusForbidden},
		{"list qualified referrals", get, "/api/v1/referrals/qualified", nil, sandbox.RoleQualifiedReferralsRead, http.StatusOK},
		{"get qualified referral", get, "/api/v1/referrals/qualified/" + fixtureSourceID, nil, sandbox.RoleQualifiedReferralsRead, http.StatusNotFound},
	}
}

// TestAPI_Ping: pong with the sandbox clock's time, and who may ping.
func TestAPI_Ping(t *testing.T) {
	tests := []struct {
		name    string
		client  string        // "" sends no token
		advance time.Duration // the sandbox clock is moved first
		want    int
		// challenge is the WWW-Authenticate error code of a refusal.
		challenge string
	}{
		{name: "pong at the sandbox time", client: partner, want: http.StatusOK},
		{name: "the timestamp follows the sandbox clock two days ahead", client: partner, advance: 48 * time.Hour, want: http.StatusOK},
		{name: "any role of the API will do", client: readonly, want: http.StatusOK},
		{name: "no token", want: http.StatusUnauthorized, challenge: "invalid_token"},
		{name: "a token without roles", client: noroles, want: http.StatusForbidden, challenge: "insufficient_scope"},
		{name: "a token for another API", client: otherAPI, want: http.StatusUnauthorized, challenge: "invalid_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSandbox(t)
			if tt.advance != 0 {
				s.advance(tt.advance)
			}
			token := ""
			if tt.client != "" {
				token = s.token(tt.client) // after the move, or it would be expired
			}
			before := s.Clock.Now().Truncate(time.Microsecond)
			r := s.do(request{path: "/health/ping", token: token})
			after := s.Clock.Now()
			if tt.want != http.StatusOK {
				wantProblem(t, r, tt.want, map[int]string{401: sandbox.ProblemTypeUnauthorized, 403: sandbox.ProblemTypeForbidden}[tt.want])
				wantChallenge(t, r, tt.challenge)
				return
			}
			if r.Status != http.StatusOK {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			var body struct{ Message, Timestamp string }
			r.decode(t, &body)
			if body.Message != "pong" {
				t.Errorf("message %q, want pong", body.Message)
			}
			if !pingTimestampRE.MatchString(body.Timestamp) {
				t.Fatalf("timestamp %q, want UTC with +00:00 and six fraction digits", body.Timestamp)
			}
			at, err := time.Parse(time.RFC3339Nano, body.Timestamp)
			if err != nil {
				t.Fatal(err)
			}
			if at.Before(before) || at.After(after) {
				t.Errorf("timestamp %s is not the sandbox time of the request (between %s and %s)", at, before, after)
			}
			if tt.advance != 0 && time.Until(at) < tt.advance-time.Hour {
				t.Errorf("timestamp %s does not show the clock moved %s ahead of real time", at, tt.advance)
			}
		})
	}
}

// TestAPI_Trials: only active trials accepting referrals are listed, with
// exactly the four documented fields, and [] when there are none.
func TestAPI_Trials(t *testing.T) {
	listed := []string{"TRIAL-CARDIO-001", "TRIAL-ONCO-002", "TRIAL-DIAB-003"}
	tests := []struct {
		name   string
		client string
		want   int
	}{
		{"a partner sees the active trials accepting referrals", partner, http.StatusOK},
		{"read-only clients may list trials", readonly, http.StatusOK},
		{"a token without Trials.Read is refused", noroles, http.StatusForbidden},
		{"a token for another API is refused", otherAPI, http.StatusUnauthorized},
	}
	s := newSandbox(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(request{path: "/api/v1/referrals/trials", token: s.token(tt.client)})
			switch tt.want {
			case http.StatusForbidden:
				wantProblem(t, r, tt.want, sandbox.ProblemTypeForbidden)
				if scope := wantChallenge(t, r, "insufficient_scope")["scope"]; scope != sandbox.RoleTrialsRead {
					t.Errorf("scope %q, want %s", scope, sandbox.RoleTrialsRead)
				}
				return
			case http.StatusUnauthorized:
				wantProblem(t, r, tt.want, sandbox.ProblemTypeUnauthorized)
				return
			}
			if r.Status != http.StatusOK {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			var body struct{ Trials []map[string]any }
			r.decode(t, &body)
			var ids []string
			for _, trial := range body.Trials {
				ids = append(ids, fmt.Sprint(trial["trialId"]))
				keys := make([]string, 0, len(trial))
				for k := range trial {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				if want := []string{"altTrialId", "name", "trialId", "versionId"}; !slices.Equal(keys, want) {
					t.Errorf("trial %v has fields %v, want exactly %v", trial["trialId"], keys, want)
				}
			}
			if !slices.Equal(ids, listed) {
				t.Errorf("trials %v, want %v (not TRIAL-NEURO-004, full, nor TRIAL-RESP-005, closed)", ids, listed)
			}
			onco := body.Trials[slices.Index(ids, "TRIAL-ONCO-002")]
			if onco["altTrialId"] != "NCT05550001" || onco["versionId"] != "v1" || onco["name"] != "Early Breast Cancer Screening Trial" {
				t.Errorf("TRIAL-ONCO-002 is %v, not as in trials.json", onco)
			}
		})
	}

	t.Run("no trial takes referrals: an empty array, not null", func(t *testing.T) {
		closed := newSandbox(t, func(cfg *sandboxConfig) {
			set := *cfg.Fixtures
			set.Trials = slices.Clone(set.Trials)
			for i := range set.Trials {
				set.Trials[i].Active = false
			}
			cfg.Fixtures = &set
		})
		r := closed.do(request{path: "/api/v1/referrals/trials", token: closed.token(partner)})
		if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != `{"trials":[]}` {
			t.Errorf("got %d %s, want 200 {\"trials\":[]}", r.Status, r.Body)
		}
	})
}

// TestAPI_Authentication: every way a bearer token can be missing or bad
// gets a 401 naming the reason, on every operation.
func TestAPI_Authentication(t *testing.T) {
	tests := []struct {
		name string
		// authorization returns the Authorization header ("" for none).
		authorization func(s *testSandbox) string
		reason        string // what the description must name
	}{
		{"no Authorization header", func(*testSandbox) string { return "" }, "missing"},
		{"Bearer without a token", func(*testSandbox) string { return "Bearer " }, "missing"},
		{"Basic credentials instead of a token", func(*testSandbox) string {
			return "Basic " + base64.StdEncoding.EncodeToString([]byte(partner+":"+partner+"-secret"))
		}, "missing"},
		{"a token that is not a JWT", func(*testSandbox) string { return "Bearer not-a-jwt" }, "malformed"},
		{"a token whose signature was altered", func(s *testSandbox) string {
			parts := strings.Split(s.token(partner), ".")
			sig := []byte(parts[2])
			sig[10] = map[bool]byte{true: 'B', false: 'A'}[sig[10] == 'A'] // a middle byte: every bit counts
			return "Bearer " + parts[0] + "." + parts[1] + "." + string(sig)
		}, "bad signature"},
		{"an expired token", func(s *testSandbox) string {
			token := s.token(partner)
			s.advance(idp.DefaultTokenLifetime + time.Second)
			return "Bearer " + token
		}, "expired"},
		{"a token for another API", func(s *testSandbox) string { return "Bearer " + s.token(otherAPI) }, "wrong audience"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSandbox(t)
			authorization := tt.authorization(s)
			for _, op := range apiOperations() {
				t.Run(op.name, func(t *testing.T) {
					req := request{method: op.method, path: op.path, body: op.body}
					if authorization != "" {
						req.headers = map[string]string{"Authorization": authorization}
					}
					r := s.do(req)
					p := wantProblem(t, r, http.StatusUnauthorized, sandbox.ProblemTypeUnauthorized)
					description := wantChallenge(t, r, "invalid_token")["error_description"]
					if !strings.Contains(description, tt.reason) {
						t.Errorf("error_description %q does not name the reason %q", description, tt.reason)
					}
					if !strings.Contains(p.Detail, tt.reason) {
						t.Errorf("problem detail %q does not name the reason %q", p.Detail, tt.reason)
					}
				})
			}
		})
	}
}

// TestAPI_NoLeewayPastExpiry: the sandbox issues and checks tokens on one
// clock, so a token is refused the second its exp passes; docs/clients.md's
// "advance 3600s expires every live token" holds.
func TestAPI_NoLeewayPastExpiry(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	s.advance(3600 * time.Second)
	r := s.do(request{path: "/health/ping", token: token})
	wantProblem(t, r, http.StatusUnauthorized, sandbox.ProblemTypeUnauthorized)
	if d := wantChallenge(t, r, "invalid_token")["error_description"]; !strings.Contains(d, "expired") {
		t.Errorf("error_description %q, want it to say expired", d)
	}
}

// TestAPI_Roles: a valid token without the operation's role gets a 403
// naming the role; read roles do not allow writes.
func TestAPI_Roles(t *testing.T) {
	s := newSandbox(t)
	tokens := map[string]string{noroles: s.token(noroles), readonly: s.token(readonly)}
	for _, op := range apiOperations() {
		t.Run(op.name+" without any role", func(t *testing.T) {
			r := s.do(request{method: op.method, path: op.path, body: op.body, token: tokens[noroles]})
			wantProblem(t, r, http.StatusForbidden, sandbox.ProblemTypeForbidden)
			params := wantChallenge(t, r, "insufficient_scope")
			if op.role != "" && params["scope"] != op.role {
				t.Errorf("scope %q, want the missing role %q", params["scope"], op.role)
			}
		})
		t.Run(op.name+" with read roles only", func(t *testing.T) {
			r := s.do(request{method: op.method, path: op.path, body: op.body, token: tokens[readonly]})
			if r.Status != op.readonly {
				t.Fatalf("status %d, want %d: %s", r.Status, op.readonly, r.Body)
			}
			if r.Status == http.StatusForbidden {
				if scope := wantChallenge(t, r, "insufficient_scope")["scope"]; scope != op.role {
					t.Errorf("scope %q, want %q", scope, op.role)
				}
			}
		})
	}
}

// TestAPI_SubmitReferral: a submission is stored under the canonical
// trialId and read back at its Location, by either trial id.
func TestAPI_SubmitReferral(t *testing.T) {
	tests := []struct {
		name      string
		path      string
		trialID   string // as submitted
		wantTrial string // canonical, as stored
	}{
		{"by trialId", "/api/v1/referrals/", "TRIAL-CARDIO-001", "TRIAL-CARDIO-001"},
		{"by trialId without the trailing slash", "/api/v1/referrals", "TRIAL-CARDIO-001", "TRIAL-CARDIO-001"},
		{"by altTrialId, stored under the trialId", "/api/v1/referrals/", "NCT05550001", "TRIAL-ONCO-002"},
		{"by a trialId that is also the altTrialId", "/api/v1/referrals", "TRIAL-DIAB-003", "TRIAL-DIAB-003"},
	}
	s := newSandbox(t)
	token := s.token(partner)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.Clock.Now().Truncate(time.Microsecond)
			// No redirect is followed: a 307 to the other spelling would
			// still end in a 201, and clients that do not follow it break.
			r := s.noRedirect().do(request{method: http.MethodPost, path: tt.path, token: token, body: referralBody(tt.trialID)})
			after := s.Clock.Now()
			if r.Status != http.StatusCreated {
				t.Fatalf("status %d, want 201: %s", r.Status, r.Body)
			}
			var ref referrals.Referral
			r.decode(t, &ref)
			if !guidRE.MatchString(ref.OutcomesID) {
				t.Errorf("outcomesId %q, want a lowercase GUID", ref.OutcomesID)
			}
			if ref.TrialID != tt.wantTrial || ref.ClientID != partner || ref.Status != referrals.StatusReceived {
				t.Errorf("trialId %q, clientId %q, status %q; want %q, %q, received", ref.TrialID, ref.ClientID, ref.Status, tt.wantTrial, partner)
			}
			wantPatient := referrals.Patient{FirstName: "Ann", LastName: "Lee", DateOfBirth: "1980-04-12", Gender: "female"}
			if ref.Patient != wantPatient || ref.Notes != "prefers mornings" {
				t.Errorf("patient %+v notes %q, want what was sent", ref.Patient, ref.Notes)
			}
			if !submittedAtRE.MatchString(ref.SubmittedAt) {
				t.Errorf("submittedAt %q, want RFC 3339 UTC with six fraction digits and Z", ref.SubmittedAt)
			} else if at, _ := time.Parse(time.RFC3339Nano, ref.SubmittedAt); at.Before(before) || at.After(after) {
				t.Errorf("submittedAt %s is not the sandbox time of the request (%s to %s)", at, before, after)
			}
			location := r.Header.Get("Location")
			if want := "/api/v1/referrals/" + tt.wantTrial + "/" + ref.OutcomesID; location != want {
				t.Fatalf("Location %q, want %q", location, want)
			}
			for _, path := range []string{location, "/api/v1/referrals/" + tt.trialID + "/" + ref.OutcomesID} {
				got := s.do(request{path: path, token: token})
				var read referrals.Referral
				got.decode(t, &read)
				if got.Status != http.StatusOK || !reflect.DeepEqual(read, ref) {
					t.Errorf("GET %s: %d %+v, want 200 with the created referral %+v", path, got.Status, read, ref)
				}
			}
		})
	}
}

// TestAPI_SubmitReferralUnknownFields: unknown fields are ignored but named
// in Sandbox-Warning, so a typo does not pass unnoticed.
func TestAPI_SubmitReferralUnknownFields(t *testing.T) {
	s := newSandbox(t)
	body := referralBody("TRIAL-CARDIO-001")
	body["foo"] = 1
	body["patient"].(map[string]any)["fristName"] = "Ann"
	r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: s.token(partner), body: body})
	if r.Status != http.StatusCreated {
		t.Fatalf("status %d, want 201 (unknown fields are ignored): %s", r.Status, r.Body)
	}
	warning := r.Header.Get(sandbox.WarningHeader)
	for _, field := range []string{"foo", "patient.fristName"} {
		if !strings.Contains(warning, field) {
			t.Errorf("%s %q does not name %s", sandbox.WarningHeader, warning, field)
		}
	}
	var ref map[string]any
	r.decode(t, &ref)
	if _, ok := ref["foo"]; ok {
		t.Errorf("the unknown field was stored: %s", r.Body)
	}
}

// TestAPI_SubmitReferralRefused: bodies refused before validation (400,
// 413, 415) and an empty object (422); none of them stores anything.
func TestAPI_SubmitReferralRefused(t *testing.T) {
	valid, err := json.Marshal(referralBody("TRIAL-CARDIO-001"))
	if err != nil {
		t.Fatal(err)
	}
	huge := referralBody("TRIAL-CARDIO-001")
	huge["notes"] = strings.Repeat("x", 1<<20)
	withPatient := func(patient string) string {
		return `{"trialId":"TRIAL-CARDIO-001","patient":` + patient + `}`
	}
	tests := []struct {
		name        string
		body        any
		contentType string
		want        int
		problemType string
		field       string // the field a 400 names, if any
	}{
		{"malformed JSON", `{"trialId": "TRIAL-CARDIO-001",`, "", http.StatusBadRequest, sandbox.ProblemTypeBadRequest, ""},
		{"an empty body", " ", "", http.StatusBadRequest, sandbox.ProblemTypeBadRequest, ""},
		{"an array instead of an object", `[1, 2]`, "", http.StatusBadRequest, sandbox.ProblemTypeBadRequest, ""},
		{"two objects", string(valid) + string(valid), "", http.StatusBadRequest, sandbox.ProblemTypeBadRequest, ""},
		{"patient is a number", withPatient(`5`), "", http.StatusBadRequest, sandbox.ProblemTypeBadRequest, "patient"},
		{"patient.firstName is a number", withPatient(`{"firstName":5,"lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female"}`), "", http.StatusBadRequest, sandbox.ProblemTypeBadRequest, "patient.firstName"},
		{"a body over 1 MiB", huge, "", http.StatusRequestEntityTooLarge, sandbox.ProblemTypePayloadTooLarge, ""},
		{"text/plain", string(valid), "text/plain", http.StatusUnsupportedMediaType, sandbox.ProblemTypeUnsupportedMediaType, ""},
		{"form-encoded", "trialId=TRIAL-CARDIO-001", "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType, sandbox.ProblemTypeUnsupportedMediaType, ""},
		{"every required field missing", `{}`, "", http.StatusUnprocessableEntity, sandbox.ProblemTypeValidationFailed, "trialId"},
	}
	s := newSandbox(t)
	token := s.token(partner)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, body: tt.body, invalid: true}
			if tt.contentType != "" {
				req.headers = map[string]string{"Content-Type": tt.contentType}
			}
			p := wantProblem(t, s.do(req), tt.want, tt.problemType)
			if tt.field != "" && !slices.Contains(errorFields(p), tt.field) {
				t.Errorf("errors name %v, want %q among them", errorFields(p), tt.field)
			}
			if p.Instance != "/api/v1/referrals/" {
				t.Errorf("instance %q, want the request path", p.Instance)
			}
		})
	}
	list := s.fetchPage(referralsList, token, "limit=500")
	if len(list.ids) != fixtureReferrals {
		t.Errorf("partner has %d referrals after refused submissions, want the %d fixtures", len(list.ids), fixtureReferrals)
	}
}

// TestAPI_SubmitQualifiedReferral: a qualified referral is stored as sent
// with one submitted audit entry, and read back at its Location.
func TestAPI_SubmitQualifiedReferral(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	body := qualifiedBody("Case-42.a_b:c-d")
	body["trialId"] = "NCT05550001"
	body["address"] = map[string]any{"line1": "1 Main St", "city": "Denver", "state": "CO", "postalCode": "80202", "country": "US"}
	body["conditions"] = []map[string]any{{"code": "E11.9", "system": "http://hl7.org/fhir/sid/icd-10-cm", "display": "Type 2 diabetes"}}
	body["qualification"] = map[string]any{"qualifiedOn": "2024-03-01", "criteriaMet": []string{"age 18-65"}, "screenerName": "Dr. Who"}
	r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: body, headers: map[string]string{"X-Request-Id": "submit-1"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("status %d, want 201: %s", r.Status, r.Body)
	}
	var q referrals.QualifiedReferral
	r.decode(t, &q)
	if q.ExternalSourceID != "Case-42.a_b:c-d" || q.TrialID != "TRIAL-ONCO-002" || q.ClientID != partner || q.Status != referrals.StatusReceived {
		t.Errorf("externalSourceId %q trialId %q clientId %q status %q; want as sent, canonical trial, %s, received", q.ExternalSourceID, q.TrialID, q.ClientID, q.Status, partner)
	}
	if q.Address == nil || q.Address.Country != "US" || len(q.Conditions) != 1 || q.Conditions[0].Code != "E11.9" || q.Qualification == nil || q.Qualification.QualifiedOn != "2024-03-01" {
		t.Errorf("the optional objects were not stored as sent: %s", r.Body)
	}
	if !submittedAtRE.MatchString(q.SubmittedAt) {
		t.Errorf("submittedAt %q, want six fraction digits and Z", q.SubmittedAt)
	}
	want := []referrals.AuditEntry{{At: q.SubmittedAt, Action: referrals.AuditSubmitted, Actor: partner, RequestID: "submit-1"}}
	if !slices.Equal(q.AuditTrail, want) {
		t.Errorf("auditTrail %+v, want one submitted entry %+v", q.AuditTrail, want)
	}
	location := r.Header.Get("Location")
	if location != "/api/v1/referrals/qualified/Case-42.a_b:c-d" {
		t.Errorf("Location %q, want /api/v1/referrals/qualified/Case-42.a_b:c-d", location)
	}
	if got := s.do(request{path: location, token: token}); got.Status != http.StatusOK {
		t.Errorf("GET Location: %d %s", got.Status, got.Body)
	}
}

// TestAPI_QualifiedReferralConflict: a repeated externalSourceId is a 409
// pointing at the existing record, which stays as it was.
func TestAPI_QualifiedReferralConflict(t *testing.T) {
	s := newSandbox(t)
	partnerToken, partner2Token := s.token(partner), s.token(partner2)
	first, _ := s.createQualified(partnerToken, "case-1")

	again := qualifiedBody("case-1")
	again["patient"].(map[string]any)["firstName"] = "Someone Else"
	r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: partnerToken, body: again})
	wantProblem(t, r, http.StatusConflict, sandbox.ProblemTypeConflict)
	if location := r.Header.Get("Location"); location != "/api/v1/referrals/qualified/case-1" {
		t.Errorf("409 Location %q, want the existing record's /api/v1/referrals/qualified/case-1", location)
	}
	var stored referrals.QualifiedReferral
	s.do(request{path: "/api/v1/referrals/qualified/case-1", token: partnerToken}).decode(t, &stored)
	if stored.Patient != first.Patient {
		t.Errorf("the repeat overwrote the record: patient %+v, want %+v", stored.Patient, first.Patient)
	}

	// Identifiers are the partner's own: another partner may use the same.
	other, _ := s.createQualified(partner2Token, "case-1")
	if other.ClientID != partner2 {
		t.Errorf("partner-2's record has clientId %q", other.ClientID)
	}
}

// TestAPI_QualifiedAuditTrail: every read of a qualified referral, one by
// one or in a listing, appends a viewed entry naming the reader and request.
func TestAPI_QualifiedAuditTrail(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner2)
	created, _ := s.createQualified(token, "audit-1")

	var requestIDs []string
	var last referrals.QualifiedReferral
	for range 2 {
		r := s.do(request{path: "/api/v1/referrals/qualified/audit-1", token: token})
		if r.Status != http.StatusOK {
			t.Fatalf("GET: %d %s", r.Status, r.Body)
		}
		requestIDs = append(requestIDs, r.Header.Get("X-Request-Id"))
		r.decode(t, &last)
	}
	actions := func(q referrals.QualifiedReferral) []string {
		var a []string
		for _, e := range q.AuditTrail {
			a = append(a, e.Action)
		}
		return a
	}
	if got, want := actions(last), []string{"submitted", "viewed", "viewed"}; !slices.Equal(got, want) {
		t.Fatalf("after two reads the audit trail is %v, want %v", got, want)
	}
	if last.AuditTrail[0] != created.AuditTrail[0] {
		t.Errorf("the submitted entry changed: %+v, was %+v", last.AuditTrail[0], created.AuditTrail[0])
	}
	for i, e := range last.AuditTrail[1:] {
		if e.Actor != partner2 || e.RequestID != requestIDs[i] || !submittedAtRE.MatchString(e.At) {
			t.Errorf("viewed entry %d is %+v, want actor %s, requestId %q (the read's X-Request-Id), a timestamp", i, e, partner2, requestIDs[i])
		}
	}

	// A listing records a view on every record it returns, and only those.
	s.createQualified(token, "audit-2")
	s.createQualified(token, "audit-3")
	page := s.fetchPage(qualifiedList, token, "limit=2")
	listID := page.response.Header.Get("X-Request-Id")
	var listed []referrals.QualifiedReferral
	for _, rec := range page.records {
		var q referrals.QualifiedReferral
		if err := json.Unmarshal(rec, &q); err != nil {
			t.Fatal(err)
		}
		listed = append(listed, q)
	}
	if len(listed) != 2 || listed[0].ExternalSourceID != "audit-3" || listed[1].ExternalSourceID != "audit-2" {
		t.Fatalf("listed %v, want audit-3 and audit-2", page.ids)
	}
	for _, q := range listed {
		if got := actions(q); !slices.Equal(got, []string{"submitted", "viewed"}) || q.AuditTrail[1].RequestID != listID {
			t.Errorf("listed %s has audit trail %+v, want submitted then viewed by the listing %q", q.ExternalSourceID, q.AuditTrail, listID)
		}
	}
	var unlisted referrals.QualifiedReferral
	s.do(request{path: "/api/v1/referrals/qualified/audit-1", token: token}).decode(t, &unlisted)
	if n := len(unlisted.AuditTrail); n != 4 {
		t.Errorf("audit-1, not on the page, has %d audit entries after a third read, want 4 (the listing added none)", n)
	}
}

// TestAPI_QualifiedStoredApart: qualified referrals and trial-based
// referrals are two collections; neither shows up in the other's reads.
func TestAPI_QualifiedStoredApart(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner2)
	ref, _ := s.createReferral(token, referralBody("TRIAL-CARDIO-001"))
	s.createQualified(token, "apart-1")

	if ids := s.fetchPage(referralsList, token, "").ids; !slices.Equal(ids, []string{ref.OutcomesID}) {
		t.Errorf("referrals list %v, want only the referral %s", ids, ref.OutcomesID)
	}
	if ids := s.fetchPage(qualifiedList, token, "").ids; !slices.Equal(ids, []string{"apart-1"}) {
		t.Errorf("qualified list %v, want only apart-1", ids)
	}
	for _, path := range []string{
		"/api/v1/referrals/qualified/" + ref.OutcomesID,
		"/api/v1/referrals/TRIAL-CARDIO-001/apart-1",
	} {
		r := s.do(request{path: path, token: token})
		wantProblem(t, r, http.StatusNotFound, sandbox.ProblemTypeNotFound)
	}
}

// TestAPI_UnknownRoutes: unknown paths are 404 problems; known paths with
// another method are 405 problems with Allow.
func TestAPI_UnknownRoutes(t *testing.T) {
	tests := []struct {
		method, path string
		want         int
		allow        string
	}{
		{http.MethodGet, "/api/v1/nothing-here", http.StatusNotFound, ""},
		{http.MethodGet, "/api/v2/referrals/", http.StatusNotFound, ""},
		{http.MethodGet, "/api/v1/referrals/TRIAL-CARDIO-001/x/y", http.StatusNotFound, ""},
		{http.MethodDelete, "/api/v1/referrals/trials", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodPut, "/api/v1/referrals/", http.StatusMethodNotAllowed, "GET, HEAD, POST"},
		{http.MethodPut, "/api/v1/referrals", http.StatusMethodNotAllowed, "GET, HEAD, POST"},
		{http.MethodPatch, "/api/v1/referrals/qualified", http.StatusMethodNotAllowed, "GET, HEAD, POST"},
		{http.MethodPost, "/health/ping", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodDelete, "/api/v1/referrals/qualified/" + fixtureSourceID, http.StatusMethodNotAllowed, "GET, HEAD"},
	}
	s := newSandbox(t)
	token := s.token(partner)
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := s.do(request{method: tt.method, path: tt.path, token: token, unknownRoute: true})
			problemType := map[int]string{404: sandbox.ProblemTypeNotFound, 405: sandbox.ProblemTypeMethodNotAllowed}[tt.want]
			p := wantProblem(t, r, tt.want, problemType)
			if allow := r.Header.Get("Allow"); allow != tt.allow {
				t.Errorf("Allow %q, want %q", allow, tt.allow)
			}
			if p.Instance != tt.path {
				t.Errorf("instance %q, want %q", p.Instance, tt.path)
			}
		})
	}
}

// TestAPI_RequestID: a valid client request id is echoed, otherwise one is
// made up, on successes and errors alike; problems quote it as traceId.
func TestAPI_RequestID(t *testing.T) {
	tests := []struct {
		name    string
		sent    string // "" sends none
		token   bool
		want    int
		echoed  bool // else a generated GUID
		problem bool
	}{
		{"echoed on success", "my-req-123", true, http.StatusOK, true, false},
		{"echoed on an error", "my-req-123", false, http.StatusUnauthorized, true, true},
		{"128 allowed characters are echoed", strings.Repeat("a.b_c:d-", 16), true, http.StatusOK, true, false},
		{"generated on success", "", true, http.StatusOK, false, false},
		{"generated on an error", "", false, http.StatusUnauthorized, false, true},
		{"an id with a space is replaced", "my req", true, http.StatusOK, false, false},
		{"an id of 129 characters is replaced", strings.Repeat("a", 129), false, http.StatusUnauthorized, false, true},
	}
	s := newSandbox(t)
	token := s.token(partner)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request{path: "/api/v1/referrals/trials"}
			if tt.token {
				req.token = token
			}
			if tt.sent != "" {
				req.headers = map[string]string{"X-Request-Id": tt.sent}
			}
			r := s.do(req)
			if r.Status != tt.want {
				t.Fatalf("status %d, want %d", r.Status, tt.want)
			}
			id := r.Header.Get("X-Request-Id")
			switch {
			case tt.echoed && id != tt.sent:
				t.Errorf("X-Request-Id %q, want the client's %q echoed", id, tt.sent)
			case !tt.echoed && !guidRE.MatchString(id):
				t.Errorf("X-Request-Id %q, want a generated GUID", id)
			}
			if tt.problem {
				if p := r.problem(t); p.TraceID != id {
					t.Errorf("problem traceId %q, X-Request-Id %q", p.TraceID, id)
				}
			}
		})
	}
}

// TestAPI_Unauthenticated: what a partner's tooling reads before it has
// credentials.
func TestAPI_Unauthenticated(t *testing.T) {
	s := newSandbox(t)
	t.Run("the OpenAPI document", func(t *testing.T) {
		r := s.do(request{path: "/api/v1/openapi.json"})
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%d %s, want 200 JSON", r.Status, r.Header.Get("Content-Type"))
		}
		var doc struct {
			OpenAPI string         `json:"openapi"`
			Paths   map[string]any `json:"paths"`
		}
		r.decode(t, &doc)
		if doc.OpenAPI != "3.0.3" || doc.Paths["/api/v1/referrals/"] == nil {
			t.Errorf("openapi %q with %d paths, want 3.0.3 describing /api/v1/referrals/", doc.OpenAPI, len(doc.Paths))
		}
	})
	t.Run("the health check", func(t *testing.T) {
		r := s.do(request{path: "/__sandbox/health"})
		if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != `{"status":"ok"}` {
			t.Errorf("%d %s, want 200 {\"status\":\"ok\"}", r.Status, r.Body)
		}
	})
}
