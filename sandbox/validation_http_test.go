package sandbox_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// Validation over HTTP: each rule of a submission with values it accepts
// and values it refuses, for both kinds of referral. A refused value must
// give a 422 naming exactly that field; an accepted one a 201.

// sandboxToday is the sandbox clock's date in these tests. It is ahead of
// real time, so a dateOfBirth of "today" is accepted only if the rules use
// the sandbox clock.
var sandboxToday = time.Date(2031, time.June, 15, 12, 0, 0, 0, time.UTC)

// fieldRule is one row of a validation table: a change to a valid body and
// what the API should say about it.
type fieldRule struct {
	name   string
	change func(body map[string]any)
	field  string   // "" when the value is accepted
	words  []string // the message mentions each
}

// onPatient applies a change to the body's patient.
func onPatient(change func(p map[string]any)) func(map[string]any) {
	return func(body map[string]any) { change(body["patient"].(map[string]any)) }
}

// setMember and unsetMember build changes of one member of an object.
func setMember(key string, v any) func(map[string]any) {
	return func(m map[string]any) { m[key] = v }
}

func unsetMember(key string) func(map[string]any) {
	return func(m map[string]any) { delete(m, key) }
}

// patientRules are the rules both kinds of referral hold the patient to.
func patientRules(today time.Time) []fieldRule {
	day := func(days int) string { return today.AddDate(0, 0, days).Format(referrals.DateLayout) }
	genders := []string{`"female"`, `"male"`, `"other"`, `"unknown"`}
	var rules []fieldRule
	add := func(name string, change func(map[string]any), field string, words ...string) {
		rules = append(rules, fieldRule{name: "patient " + name, change: onPatient(change), field: field, words: words})
	}
	for _, name := range []string{"firstName", "lastName"} {
		field := "patient." + name
		add(name+" missing", unsetMember(name), field, "required")
		add(name+" empty", setMember(name, ""), field, "required")
		add(name+" whitespace only", setMember(name, " \t "), field, "required")
		add(name+" of 101 characters", setMember(name, strings.Repeat("a", 101)), field, "100", "101")
		add(name+" of 100 characters", setMember(name, strings.Repeat("a", 100)), "")
		add(name+" of 100 two-byte characters", setMember(name, strings.Repeat("é", 100)), "")
	}

	add("dateOfBirth missing", unsetMember("dateOfBirth"), "patient.dateOfBirth", "required")
	for _, bad := range []string{"04/12/1980", "1980-2-3", "1980-04-12T00:00:00Z", "19800412"} {
		add("dateOfBirth "+bad, setMember("dateOfBirth", bad), "patient.dateOfBirth", "YYYY-MM-DD")
	}
	for _, bad := range []string{"1980-02-30", "1900-02-29", "1980-13-01"} {
		add("dateOfBirth "+bad, setMember("dateOfBirth", bad), "patient.dateOfBirth", "real calendar date")
	}
	add("dateOfBirth tomorrow", setMember("dateOfBirth", day(1)), "patient.dateOfBirth", "future", today.Format(referrals.DateLayout))
	add("dateOfBirth 1899-12-31", setMember("dateOfBirth", "1899-12-31"), "patient.dateOfBirth", "1900-01-01")
	for _, ok := range []string{"1900-01-01", "2000-02-29", day(0)} {
		add("dateOfBirth "+ok, setMember("dateOfBirth", ok), "")
	}

	for _, bad := range []string{"F", "Female", "FEMALE", "woman", ""} {
		add(fmt.Sprintf("gender %q", bad), setMember("gender", bad), "patient.gender", genders...)
	}
	add("gender missing", unsetMember("gender"), "patient.gender", genders...)
	for _, ok := range sandbox.Genders() {
		add("gender "+ok, setMember("gender", ok), "")
	}

	for _, bad := range []string{"ann.example.com", "ann@", "Ann Lee <ann@example.com>", " ann@example.com"} {
		add(fmt.Sprintf("email %q", bad), setMember("email", bad), "patient.email", "email address")
	}
	add("email ann.lee+trial@example.com", setMember("email", "ann.lee+trial@example.com"), "")

	for _, bad := range []string{"4155550123", "+0123", "+1 415 555 0123", "+1234567890123456", "+1"} {
		add(fmt.Sprintf("phone %q", bad), setMember("phone", bad), "patient.phone", "E.164")
	}
	for _, ok := range []string{"+14155550123", "+447911123456", "+12"} {
		add("phone "+ok, setMember("phone", ok), "")
	}

	for _, bad := range []string{"941/07", strings.Repeat("1", 21), "94107!"} {
		add(fmt.Sprintf("postalCode %q", bad), setMember("postalCode", bad), "patient.postalCode", "20")
	}
	for _, ok := range []string{"94107", "SW1A 1AA", "12345-6789", strings.Repeat("1", 20)} {
		add(fmt.Sprintf("postalCode %q", ok), setMember("postalCode", ok), "")
	}
	return rules
}

// referralRules are the rules only trial-based referrals have.
func referralRules() []fieldRule {
	return []fieldRule{
		{"trialId missing", unsetMember("trialId"), "trialId", []string{"required"}},
		{"trialId empty", setMember("trialId", ""), "trialId", []string{"required"}},
		{"trialId unknown", setMember("trialId", "TRIAL-NOPE-999"), "trialId", []string{"TRIAL-NOPE-999"}},
		{"trialId of an inactive trial", setMember("trialId", "TRIAL-RESP-005"), "trialId", []string{"not active"}},
		{"trialId of a trial not accepting referrals", setMember("trialId", "TRIAL-NEURO-004"), "trialId", []string{"not accepting"}},
		{"altTrialId of a trial not accepting referrals", setMember("trialId", "NCT05550004"), "trialId", []string{"not accepting"}},
		{"trialId in lowercase", setMember("trialId", "trial-cardio-001"), "trialId", []string{"trial-cardio-001"}},
		{"altTrialId", setMember("trialId", "NCT05550001"), "", nil},
		{"notes of 2001 characters", setMember("notes", strings.Repeat("n", 2001)), "notes", []string{"2000"}},
		{"notes of 2000 characters", setMember("notes", strings.Repeat("n", 2000)), "", nil},
		{"notes absent", unsetMember("notes"), "", nil},
	}
}

// qualifiedRules are the rules only qualified referrals have.
func qualifiedRules(today time.Time) []fieldRule {
	day := func(days int) string { return today.AddDate(0, 0, days).Format(referrals.DateLayout) }
	codes := func(n int) []map[string]any {
		c := make([]map[string]any, n)
		for i := range c {
			c[i] = map[string]any{"code": fmt.Sprintf("C%d", i)}
		}
		return c
	}
	onQualification := func(change func(map[string]any)) func(map[string]any) {
		return func(body map[string]any) {
			q := map[string]any{"qualifiedOn": "2024-03-01", "criteriaMet": []string{"age"}}
			change(q)
			body["qualification"] = q
		}
	}
	return []fieldRule{
		{"externalSourceId missing", unsetMember("externalSourceId"), "externalSourceId", []string{"required"}},
		{"externalSourceId empty", setMember("externalSourceId", ""), "externalSourceId", []string{"required"}},
		{"externalSourceId of 65 characters", setMember("externalSourceId", strings.Repeat("x", 65)), "externalSourceId", []string{"64"}},
		{"externalSourceId with a space", setMember("externalSourceId", "case 42"), "externalSourceId", []string{"letters, digits"}},
		{"externalSourceId with a slash", setMember("externalSourceId", "case/42"), "externalSourceId", []string{"letters, digits"}},
		{"externalSourceId with a non-ASCII letter", setMember("externalSourceId", "casé-42"), "externalSourceId", []string{"letters, digits"}},
		{"externalSourceId of every allowed character", setMember("externalSourceId", "AZaz09._:-"), "", nil},
		{"externalSourceId '.'", setMember("externalSourceId", "."), "externalSourceId", []string{"'.' or '..'"}},
		{"externalSourceId '..'", setMember("externalSourceId", ".."), "externalSourceId", []string{"'.' or '..'"}},
		{"externalSourceId of 64 characters", setMember("externalSourceId", strings.Repeat("x", 64)), "", nil},
		{"trialId of an inactive trial", setMember("trialId", "TRIAL-RESP-005"), "trialId", []string{"not active"}},
		{"trialId unknown", setMember("trialId", "TRIAL-NOPE-999"), "trialId", []string{"TRIAL-NOPE-999"}},
		{"trialId absent", unsetMember("trialId"), "", nil},
		{"trialId by altTrialId", setMember("trialId", "NCT05550001"), "", nil},
		{"address.country us", setMember("address", map[string]any{"country": "us"}), "address.country", []string{"ISO 3166-1"}},
		{"address.country USA", setMember("address", map[string]any{"country": "USA"}), "address.country", []string{"ISO 3166-1"}},
		{"address.country US", setMember("address", map[string]any{"country": "US", "city": "Denver"}), "", nil},
		{"address.line1 of 201 characters", setMember("address", map[string]any{"line1": strings.Repeat("a", 201)}), "address.line1", []string{"200"}},
		{"a condition without a code", setMember("conditions", []map[string]any{{"display": "asthma"}}), "conditions[0].code", []string{"required"}},
		{"the second condition with a blank code", setMember("conditions", []map[string]any{{"code": "J45"}, {"code": " "}}), "conditions[1].code", []string{"required"}},
		{"51 conditions", setMember("conditions", codes(51)), "conditions", []string{"50"}},
		{"50 conditions", setMember("conditions", codes(50)), "", nil},
		{"a medication without a code", setMember("medications", []map[string]any{{"system": "rxnorm"}}), "medications[0].code", []string{"required"}},
		{"qualifiedOn tomorrow", onQualification(setMember("qualifiedOn", day(1))), "qualification.qualifiedOn", []string{"future"}},
		{"qualifiedOn 01/03/2024", onQualification(setMember("qualifiedOn", "01/03/2024")), "qualification.qualifiedOn", []string{"YYYY-MM-DD"}},
		{"qualifiedOn 2024-02-30", onQualification(setMember("qualifiedOn", "2024-02-30")), "qualification.qualifiedOn", []string{"real calendar date"}},
		{"qualifiedOn today", onQualification(setMember("qualifiedOn", day(0))), "", nil},
		{"an empty criterion", onQualification(setMember("criteriaMet", []string{"age", ""})), "qualification.criteriaMet[1]", []string{"empty"}},
	}
}

// checkRule checks the answer to a submission changed by rule.
func checkRule(t *testing.T, r *response, rule fieldRule) {
	t.Helper()
	if rule.field == "" {
		if r.Status != http.StatusCreated {
			t.Fatalf("status %d, want 201: %s", r.Status, r.Body)
		}
		return
	}
	p := wantProblem(t, r, http.StatusUnprocessableEntity, sandbox.ProblemTypeValidationFailed)
	wantFieldError(t, p, rule.field, rule.words...)
}

// TestAPI_ReferralValidation runs the patient and referral rules against
// POST /api/v1/referrals/.
func TestAPI_ReferralValidation(t *testing.T) {
	s := newSandbox(t)
	s.setClock(sandboxToday)
	token := s.token(partner)
	for _, rule := range append(patientRules(sandboxToday), referralRules()...) {
		t.Run(rule.name, func(t *testing.T) {
			body := referralBody("TRIAL-CARDIO-001")
			rule.change(body)
			r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, body: body, invalid: rule.field != ""})
			checkRule(t, r, rule)
		})
	}
}

// TestAPI_QualifiedReferralValidation runs the patient and qualified rules
// against POST /api/v1/referrals/qualified.
func TestAPI_QualifiedReferralValidation(t *testing.T) {
	s := newSandbox(t)
	s.setClock(sandboxToday)
	token := s.token(partner)
	for i, rule := range append(patientRules(sandboxToday), qualifiedRules(sandboxToday)...) {
		t.Run(rule.name, func(t *testing.T) {
			body := qualifiedBody(fmt.Sprintf("rule-%d", i)) // accepted rows must not collide
			rule.change(body)
			r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: body, invalid: rule.field != ""})
			checkRule(t, r, rule)
		})
	}
}

// TestAPI_DottedExternalSourceIDsReadBack: ids made of or starting with dots
// that are not "." or ".." are stored and read back at their Location.
func TestAPI_DottedExternalSourceIDsReadBack(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	token := s.token(partner)
	for _, id := range []string{"...", ".a", "..b", "a.."} {
		_, created := s.createQualified(token, id)
		loc := created.Header.Get("Location")
		r := s.do(request{path: loc, token: token})
		var got referrals.QualifiedReferral
		r.decode(t, &got)
		if r.Status != http.StatusOK || got.ExternalSourceID != id {
			t.Errorf("%q at Location %q: %d, externalSourceId %q", id, loc, r.Status, got.ExternalSourceID)
		}
	}
}

// TestAPI_TrialRefusalsDiffer: unknown, closed and full trials are told
// apart, so a partner knows whether to fix the id or pick another trial.
func TestAPI_TrialRefusalsDiffer(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	messages := map[string]string{}
	for _, id := range []string{"TRIAL-NOPE-999", "TRIAL-RESP-005", "TRIAL-NEURO-004"} {
		r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, body: referralBody(id), invalid: true})
		p := wantProblem(t, r, http.StatusUnprocessableEntity, sandbox.ProblemTypeValidationFailed)
		wantFieldError(t, p, "trialId", id)
		for other, m := range messages {
			if m == strings.ReplaceAll(p.Errors[0].Message, id, other) {
				t.Errorf("%s and %s are refused with the same message %q", id, other, m)
			}
		}
		messages[id] = p.Errors[0].Message
	}
}

// TestAPI_ValidationReportsEveryField: one response lists every bad field,
// so a partner fixes them all in one round.
func TestAPI_ValidationReportsEveryField(t *testing.T) {
	badPatient := map[string]any{"lastName": "Lee", "dateOfBirth": "04/12/1980", "gender": "F"}
	tests := []struct {
		name   string
		path   string
		body   any
		fields []string
	}{
		{"referral: bad dateOfBirth and gender", "/api/v1/referrals/",
			map[string]any{"trialId": "TRIAL-CARDIO-001", "patient": map[string]any{"firstName": "Ann", "lastName": "Lee", "dateOfBirth": "04/12/1980", "gender": "F"}},
			[]string{"patient.dateOfBirth", "patient.gender"}},
		{"referral: five bad fields", "/api/v1/referrals/",
			map[string]any{"trialId": "TRIAL-NOPE-999", "patient": badPatient, "notes": strings.Repeat("n", 2001)},
			[]string{"trialId", "patient.firstName", "patient.dateOfBirth", "patient.gender", "notes"}},
		{"referral: an empty object", "/api/v1/referrals/", map[string]any{},
			[]string{"trialId", "patient.firstName", "patient.lastName", "patient.dateOfBirth", "patient.gender"}},
		{"qualified: id, patient and country", "/api/v1/referrals/qualified",
			map[string]any{"externalSourceId": "case 42", "patient": badPatient, "address": map[string]any{"country": "usa"}},
			[]string{"externalSourceId", "patient.firstName", "patient.dateOfBirth", "patient.gender", "address.country"}},
	}
	s := newSandbox(t)
	token := s.token(partner)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(request{method: http.MethodPost, path: tt.path, token: token, body: tt.body, invalid: true})
			p := wantProblem(t, r, http.StatusUnprocessableEntity, sandbox.ProblemTypeValidationFailed)
			got := errorFields(p)
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(tt.fields))) {
				t.Errorf("errors on %v, want exactly %v", got, tt.fields)
			}
			for _, e := range p.Errors {
				if e.Message == "" {
					t.Errorf("error on %s has no message", e.Field)
				}
			}
			if !strings.Contains(p.Detail, fmt.Sprint(len(tt.fields))) {
				t.Errorf("detail %q does not count the %d fields", p.Detail, len(tt.fields))
			}
		})
	}
}
