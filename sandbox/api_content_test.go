package sandbox_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// null where the schema forbids it (no request field is nullable), strings
// that are not valid UTF-8 and NUL characters are a 422 naming the field;
// nothing is stored as U+FFFD.
func TestSubmissionContentIsRefusedNamingTheField(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	const patient = `"patient":{"firstName":"Ann","lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female"}`
	withName := func(name string) string {
		return `"patient":{"firstName":` + name + `,"lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female"}`
	}
	tests := []struct {
		name, path, body, field, words string
	}{
		{"null notes", "/api/v1/referrals/", `{"trialId":"TRIAL-CARDIO-001",` + patient + `,"notes":null}`, "notes", "null"},
		{"null trialId (qualified)", "/api/v1/referrals/qualified", `{"externalSourceId":"c-1","trialId":null,` + patient + `}`, "trialId", "null"},
		{"null conditions", "/api/v1/referrals/qualified", `{"externalSourceId":"c-2",` + patient + `,"conditions":null}`, "conditions", "null"},
		{"null coding", "/api/v1/referrals/qualified", `{"externalSourceId":"c-3",` + patient + `,"conditions":[null]}`, "conditions[0]", "null"},
		{"null email", "/api/v1/referrals/qualified", `{"externalSourceId":"c-4","patient":{"firstName":"Ann","lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female","email":null}}`, "patient.email", "null"},
		{"null criterion", "/api/v1/referrals/qualified", `{"externalSourceId":"c-5",` + patient + `,"qualification":{"criteriaMet":["a",null]}}`, "qualification.criteriaMet[1]", "null"},
		{"null firstName", "/api/v1/referrals/", `{"trialId":"TRIAL-CARDIO-001",` + withName("null") + `}`, "patient.firstName", "null"},
		{"invalid UTF-8 bytes", "/api/v1/referrals/", `{"trialId":"TRIAL-CARDIO-001",` + withName("\"An\xffn\"") + `}`, "patient.firstName", "UTF-8"},
		{"lone surrogate", "/api/v1/referrals/qualified", `{"externalSourceId":"c-6",` + withName(`"An\ud800n"`) + `}`, "patient.firstName", "UTF-8"},
		{"NUL", "/api/v1/referrals/", `{"trialId":"TRIAL-CARDIO-001",` + withName(`"An\u0000n"`) + `}`, "patient.firstName", "NUL"},
		{"NUL in notes", "/api/v1/referrals/", `{"trialId":"TRIAL-CARDIO-001",` + patient + `,"notes":"a\u0000"}`, "notes", "NUL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.as(t).do(request{method: http.MethodPost, path: tc.path, token: token, body: tc.body, invalid: true})
			p := wantProblem(t, r, http.StatusUnprocessableEntity, sandbox.ProblemTypeValidationFailed)
			if len(p.Errors) != 1 || p.Errors[0].Field != tc.field || !strings.Contains(p.Errors[0].Message, tc.words) {
				t.Errorf("errors %+v, want exactly one for %s saying %q", p.Errors, tc.field, tc.words)
			}
		})
	}

	// What is allowed stays allowed: a real U+FFFD, escaped non-ASCII, a
	// null in a field the sandbox does not know (ignored, with a warning).
	for _, body := range []string{
		`{"trialId":"TRIAL-CARDIO-001",` + withName(`"An\ufffdn"`) + `}`,
		`{"trialId":"TRIAL-CARDIO-001",` + withName("\"An\uFFFDn\"") + `}`,
		`{"trialId":"TRIAL-CARDIO-001",` + withName(`"Ren\u00e9e"`) + `}`,
		`{"trialId":"TRIAL-CARDIO-001",` + patient + `,"extra":null}`,
	} {
		if r := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, body: body}); r.Status != http.StatusCreated {
			t.Errorf("POST %s: %d %s, want 201", body, r.Status, r.Body)
		}
	}
}
