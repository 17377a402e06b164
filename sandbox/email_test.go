package sandbox_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/partnerapi"
)

// The server's email rule and the document's (format: email with its
// pattern, as kin-openapi validates it) agree on every address of a table:
// what one accepts the other accepts.
func TestEmailRuleAgreesWithTheDocument(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	if err != nil {
		t.Fatal(err)
	}
	emailSchema := doc.Components.Schemas["Patient"].Value.Properties["email"].Value
	if emailSchema.Pattern != partnerapi.EmailPattern {
		t.Fatalf("the document's email pattern %q is not the server's %q", emailSchema.Pattern, partnerapi.EmailPattern)
	}
	s := newSandbox(t)
	token := s.token(partner)
	tests := []struct {
		email string
		valid bool
	}{
		{"name@example.com", true},
		{"first.last+tag@sub.example.co.uk", true},
		{"o'brien@example.ie", true},
		{"x_y-z@a-b.example", true},
		{"UPPER@EXAMPLE.COM", true},
		{"a@b", false},
		{"x@localhost", false},
		{"a@-example.com", false},
		{"a@example-.com", false},
		{"a@example..com", false},
		{"a.@example.com", false},
		{".a@example.com", false},
		{"a..b@example.com", false},
		{`"quoted"@example.com`, false},
		{"Ann <ann@example.com>", false},
		{"ann@[127.0.0.1]", false},
		{"ann@example.c0m", false},
		{"ann @example.com", false},
		{"ann@example.com ", false},
		{"@example.com", false},
		{"ann@", false},
		{"ann", false},
	}
	for i, tc := range tests {
		t.Run(tc.email, func(t *testing.T) {
			docErr := emailSchema.VisitJSON(tc.email)
			if (docErr == nil) != tc.valid {
				t.Errorf("the document says valid=%v (%v), want %v", docErr == nil, docErr, tc.valid)
			}
			body := qualifiedBody("email-" + strconv.Itoa(i))
			patient := validPatient()
			patient["email"] = tc.email
			body["patient"] = patient
			r := s.as(t).do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: body, invalid: !tc.valid})
			switch {
			case tc.valid && r.Status != http.StatusCreated:
				t.Errorf("server refused a valid address: %d %s", r.Status, r.Body)
			case !tc.valid:
				p := wantProblem(t, r, http.StatusUnprocessableEntity, sandbox.ProblemTypeValidationFailed)
				wantFieldError(t, p, "patient.email")
			}
		})
	}
}
