package sandbox_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestDuplicateMembersAreRefused: a member given twice in one object
// (exactly, or in another case, which encoding/json decodes into the same
// field) is a 422 that names it as a JSON Pointer, and nothing is stored,
// on the partner API and the admin API alike. Before, the later value was
// stored with a 201.
func TestDuplicateMembersAreRefused(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tok := s.token(partner)
	const patient = `{"firstName":"Ann","lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female"`
	tests := []struct {
		name, method, path, body string
		pointer, field           string
		// stored is where a 404 shows that nothing was stored.
		stored string
	}{
		{"API: externalSourceId and gender twice", http.MethodPost, "/api/v1/referrals/qualified",
			`{"externalSourceId":"dup-a","externalSourceId":"dup-b","patient":` + patient + `,"gender":"male"}}`,
			"/externalSourceId", "externalSourceId", "/api/v1/referrals/qualified/dup-b"},
		{"API: gender twice, nested", http.MethodPost, "/api/v1/referrals/qualified",
			`{"externalSourceId":"dup-c","patient":` + patient + `,"gender":"male"}}`,
			"/patient/gender", "patient.gender", "/api/v1/referrals/qualified/dup-c"},
		{"API: gender in another case", http.MethodPost, "/api/v1/referrals/qualified",
			`{"externalSourceId":"dup-d","patient":` + patient + `,"Gender":"male"}}`,
			"/patient/Gender", "patient.Gender", "/api/v1/referrals/qualified/dup-d"},
		{"API: an unknown member twice", http.MethodPost, "/api/v1/referrals/qualified",
			`{"externalSourceId":"dup-e","patient":` + patient + `},"extra":{"a":1,"a":2}}`,
			"/extra/a", "extra.a", "/api/v1/referrals/qualified/dup-e"},
		{"admin API: a rule's status twice", http.MethodPost, "/__sandbox/scenarios",
			`{"id":"dup-rule","endpoint":"api","status":200,"status":500}`,
			"/status", "status", "/__sandbox/scenarios/dup-rule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := s.as(t)
			token := tok
			if strings.HasPrefix(tt.path, "/__sandbox/") {
				token = ""
			}
			r := s.do(request{method: tt.method, path: tt.path, token: token, body: tt.body, invalid: true,
				headers: map[string]string{"Content-Type": "application/json"}})
			p := wantProblem(t, r, http.StatusUnprocessableEntity, sandbox.ProblemTypeValidationFailed)
			if !strings.Contains(p.Detail, `"`+tt.pointer+`"`) {
				t.Errorf("detail %q does not name %q", p.Detail, tt.pointer)
			}
			if len(p.Errors) != 1 || p.Errors[0].Field != tt.field || !strings.Contains(p.Errors[0].Message, tt.pointer) {
				t.Errorf("errors %+v, want one for %s naming %s", p.Errors, tt.field, tt.pointer)
			}
			if r := s.do(request{path: tt.stored, token: token, plain: true}); r.Status != http.StatusNotFound {
				t.Errorf("GET %s after the 422: %d, want 404 (nothing stored)", tt.stored, r.Status)
			}
		})
	}
}
