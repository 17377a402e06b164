package partnerapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// testLimit is the API's 1 MiB body limit; the handlers pass theirs.
const testLimit = 1 << 20

func postJSON(body, contentType string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/referrals/", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

// problemOf returns the problem of a requestError, failing the test for any
// other error.
func problemOf(t *testing.T, err error) reply.Problem {
	t.Helper()
	var re *reply.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("error = %v (%T), want *reply.RequestError", err, err)
	}
	return re.Problem
}

func TestDecodeJSONContentType(t *testing.T) {
	tests := []struct {
		contentType string
		wantStatus  int // 0: accepted
	}{
		{"application/json", 0},
		{"application/json; charset=utf-8", 0},
		{"Application/JSON;charset=UTF-8", 0},
		{"application/merge-patch+json", 0},
		{"application/vnd.referrals+json; version=1", 0},
		{"application/json; charset", 0}, // malformed parameter, usable type
		{"", http.StatusUnsupportedMediaType},
		{"text/plain", http.StatusUnsupportedMediaType},
		{"text/json", http.StatusUnsupportedMediaType},
		{"application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"application/jsonx", http.StatusUnsupportedMediaType},
		{"application/json-seq", http.StatusUnsupportedMediaType},
		{"/json", http.StatusUnsupportedMediaType},
	}
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			var into referralRequest
			_, err := decodeJSON(postJSON(`{"trialId":"T-1"}`, tt.contentType), testLimit, &into)
			if tt.wantStatus == 0 {
				if err != nil || into.TrialID != "T-1" {
					t.Fatalf("err = %v, trialId = %q; want accepted", err, into.TrialID)
				}
				return
			}
			p := problemOf(t, err)
			if p.Status != tt.wantStatus || p.Type != reply.TypeUnsupportedMediaType || !strings.Contains(p.Detail, "application/json") {
				t.Errorf("problem = %+v, want 415 naming application/json", p)
			}
		})
	}
}

func TestDecodeJSONSizeLimit(t *testing.T) {
	// A valid object of exactly testLimit bytes: {"notes":"xxx…"}.
	exact := `{"notes":"` + strings.Repeat("x", testLimit-len(`{"notes":""}`)) + `"}`
	if len(exact) != testLimit {
		t.Fatalf("test body is %d bytes", len(exact))
	}
	var into referralRequest
	if _, err := decodeJSON(postJSON(exact, "application/json"), testLimit, &into); err != nil {
		t.Fatalf("body of exactly the limit: %v", err)
	}

	over := exact + " "
	_, err := decodeJSON(postJSON(over, "application/json"), testLimit, &into)
	p := problemOf(t, err)
	if p.Status != http.StatusRequestEntityTooLarge || p.Type != reply.TypePayloadTooLarge || !strings.Contains(p.Detail, "1048576") {
		t.Errorf("problem = %+v, want 413 naming the limit", p)
	}
}

func TestDecodeJSONBadRequests(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		wantDetail []string          // substrings of detail
		wantErrors map[string]string // field -> message, for type errors
	}{
		{"empty", "", []string{"empty"}, nil},
		{"whitespace only", " \n\t ", []string{"empty"}, nil},
		{"missing value", `{"trialId": }`, []string{"line 1, column 13", "invalid character '}'"}, nil},
		{"error on line 3", "{\n  \"trialId\": \"T\",\n  \"notes\": tru\n}", []string{"line 3, column 15", "invalid character"}, nil},
		{"column counts characters", "{\"notes\": \"é\" x}", []string{"line 1, column 15"}, nil},
		{"truncated", `{"trialId": "T"`, []string{"line 1, column 16", "unexpected end"}, nil},
		{"single quotes", `{'trialId': 'T'}`, []string{"line 1, column 2"}, nil},
		{"byte order mark", "\xef\xbb\xbf{}", []string{"line 1, column 1"}, nil},
		{"trailing object", `{} {}`, []string{"unexpected data after the top-level object", "column 4"}, nil},
		{"trailing garbage", "{}\nx", []string{"unexpected data", "line 2, column 1"}, nil},
		{"array", `[{"trialId":"T"}]`, []string{"must be a JSON object, got an array"}, nil},
		{"string", `"T"`, []string{"got a string"}, nil},
		{"number", `42`, []string{"got a number"}, nil},
		{"null", `null`, []string{"got null"}, nil},
		{"boolean", `true`, []string{"got a boolean"}, nil},
		{"patient is a number", `{"patient": 5}`, []string{"field patient: expected an object, got a number"},
			map[string]string{"patient": "expected an object, got a number"}},
		{"firstName is a number", `{"patient": {"firstName": 12}}`, []string{"field patient.firstName: expected a string, got a number"},
			map[string]string{"patient.firstName": "expected a string, got a number"}},
		{"two wrong types reported together", `{"trialId": true, "patient": {"lastName": ["x"]}}`, []string{"field trialId", "1 more"},
			map[string]string{"trialId": "expected a string, got a boolean", "patient.lastName": "expected a string, got an array"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var into referralRequest
			_, err := decodeJSON(postJSON(tt.body, "application/json"), testLimit, &into)
			p := problemOf(t, err)
			if p.Status != http.StatusBadRequest || p.Type != reply.TypeBadRequest {
				t.Fatalf("problem = %+v, want 400 bad-request", p)
			}
			for _, want := range tt.wantDetail {
				if !strings.Contains(p.Detail, want) {
					t.Errorf("detail %q does not contain %q", p.Detail, want)
				}
			}
			got := map[string]string{}
			for _, fe := range p.Errors {
				got[fe.Field] = fe.Message
			}
			if len(got) != len(tt.wantErrors) {
				t.Errorf("errors = %v, want %v", p.Errors, tt.wantErrors)
			}
			for field, msg := range tt.wantErrors {
				if got[field] != msg {
					t.Errorf("errors[%s] = %q, want %q", field, got[field], msg)
				}
			}
		})
	}
}

func TestDecodeJSONTypeErrorPathsHaveIndices(t *testing.T) {
	body := `{"externalSourceId":"x","conditions":[{"code":"a"},{"code":7}],"qualification":{"criteriaMet":["ok",false]}}`
	var into qualifiedReferralRequest
	_, err := decodeJSON(postJSON(body, "application/json"), testLimit, &into)
	p := problemOf(t, err)
	want := []reply.FieldError{
		{Field: "conditions[1].code", Message: "expected a string, got a number"},
		{Field: "qualification.criteriaMet[1]", Message: "expected a string, got a boolean"},
	}
	if !slices.Equal(p.Errors, want) {
		t.Errorf("errors = %v, want %v", p.Errors, want)
	}
}

func TestDecodeJSONUnknownFields(t *testing.T) {
	tests := []struct {
		name        string
		body        string
		wantUnknown []string
	}{
		{"none", `{"trialId":"T","patient":{"firstName":"Ada"},"notes":"n"}`, nil},
		{"nulls everywhere are fine", `{"trialId":null,"patient":null,"notes":null}`, nil},
		{"top level and nested, in document order",
			`{"zeta":1,"patient":{"fristName":"Ada","firstName":"Ada"},"alpha":{"deep":[1,{"x":2}]}}`,
			[]string{"zeta", "patient.fristName", "alpha"}},
		{"case-insensitive match is known, as encoding/json decodes it", `{"TrialID":"T","PATIENT":{"FirstName":"A"}}`, nil},
		{"odd keys are quoted", `{"first name":1,"patient":{"a.b":2,"":3}}`,
			[]string{`["first name"]`, `patient["a.b"]`, `patient[""]`}},
		{"non-ASCII keys are escaped", `{"prénom":"A"}`, []string{`["pr\u00e9nom"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var into referralRequest
			unknown, err := decodeJSON(postJSON(tt.body, "application/json"), testLimit, &into)
			if err != nil {
				t.Fatalf("decodeJSON: %v", err)
			}
			if !slices.Equal(unknown, tt.wantUnknown) {
				t.Errorf("unknown = %q, want %q", unknown, tt.wantUnknown)
			}
		})
	}
}

func TestDecodeJSONQualifiedUnknownFieldsAndValues(t *testing.T) {
	body := `{
		"externalSourceId": "ext-1",
		"patient": {"firstName": "Ada", "lastName": "Lovelace", "gender": "female"},
		"address": {"country": "GB", "zip": "N1"},
		"conditions": [{"cod": "E11"}, {"code": "I10", "system": "ICD-10"}],
		"qualification": {"qualifiedOn": "2025-10-01", "criteriaMet": ["a1c"], "score": 3}
	}`
	var into qualifiedReferralRequest
	unknown, err := decodeJSON(postJSON(body, "application/json; charset=utf-8"), testLimit, &into)
	if err != nil {
		t.Fatalf("decodeJSON: %v", err)
	}
	wantUnknown := []string{"address.zip", "conditions[0].cod", "qualification.score"}
	if !slices.Equal(unknown, wantUnknown) {
		t.Errorf("unknown = %q, want %q", unknown, wantUnknown)
	}
	if into.ExternalSourceID != "ext-1" || into.Patient.LastName != "Lovelace" || into.Address == nil || into.Address.Country != "GB" ||
		len(into.Conditions) != 2 || into.Conditions[1].System != "ICD-10" || into.Qualification == nil || into.Qualification.CriteriaMet[0] != "a1c" {
		t.Errorf("decoded = %+v", into)
	}
	if into.Medications != nil {
		t.Errorf("medications = %v, want nil when absent", into.Medications)
	}
}

func TestDecodeJSONUnknownFieldsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range maxUnknownFields + 5 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
	}
	b.WriteString("}")
	var into referralRequest
	unknown, err := decodeJSON(postJSON(b.String(), "application/json"), testLimit, &into)
	if err != nil {
		t.Fatal(err)
	}
	if len(unknown) != maxUnknownFields || unknown[0] != "k" {
		t.Errorf("got %d unknown fields starting %q, want the first %d", len(unknown), unknown[0], maxUnknownFields)
	}
}

func TestDecodeJSONDeepNesting(t *testing.T) {
	// encoding/json allows 10000 levels of nesting and fails beyond; the
	// failure must be a 400, and nothing may recurse per level of input.
	tests := []struct {
		name    string
		body    string
		wantErr string // "" means accepted with unknown field x
	}{
		{"10001 levels at top level", strings.Repeat("[", 10001) + strings.Repeat("]", 10001), "exceeded max depth"},
		{"10001 levels under a known field", `{"patient":` + strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10001), "exceeded max depth"},
		{"10001 levels under an unknown field", `{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}", "exceeded max depth"},
		{"unclosed 500000 levels", strings.Repeat("[", 500000), "exceeded max depth"},
		{"exactly 10000 levels are accepted", `{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + "}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var into referralRequest
			unknown, err := decodeJSON(postJSON(tt.body, "application/json"), testLimit, &into)
			if tt.wantErr == "" {
				if err != nil || !slices.Equal(unknown, []string{"x"}) {
					t.Fatalf("err = %v, unknown = %q; want accepted with unknown x", err, unknown)
				}
				return
			}
			if p := problemOf(t, err); p.Status != http.StatusBadRequest || !strings.Contains(p.Detail, tt.wantErr) {
				t.Errorf("problem = %+v, want 400 saying %q", p, tt.wantErr)
			}
		})
	}
}

// custom decodes itself; the walker must not second-guess it.
type custom struct{ n int }

func (c *custom) UnmarshalJSON(b []byte) error { c.n = len(b); return nil }

func TestDecodeJSONGenericTargets(t *testing.T) {
	type Inner struct {
		Count int `json:"count"`
	}
	type target struct {
		Inner                         // promoted: "count" is known
		Tags    map[string]Inner      `json:"tags"`
		Raw     json.RawMessage       `json:"raw"`
		Any     any                   `json:"any"`
		Custom  custom                `json:"custom"`
		Quoted  int                   `json:"quoted,string"`
		Num     json.Number           `json:"num"`
		Skipped string                `json:"-"`
		Nested  *map[string][]float64 `json:"nested"`
	}
	body := `{"count":3,"tags":{"a":{"count":1,"extra":true}},"raw":{"whatever":[1]},"any":{"x":{"y":1}},
		"custom":[1,2],"quoted":"12","num":12.5,"Skipped":"x","nested":{"k":[1.5,2]}}`
	var into target
	unknown, err := decodeJSON(postJSON(body, "application/json"), testLimit, &into)
	if err != nil {
		t.Fatalf("decodeJSON: %v", err)
	}
	if want := []string{"tags.a.extra", "Skipped"}; !slices.Equal(unknown, want) {
		t.Errorf("unknown = %q, want %q", unknown, want)
	}
	if into.Count != 3 || into.Quoted != 12 || into.Custom.n != 5 || into.Num != "12.5" {
		t.Errorf("decoded = %+v", into)
	}

	_, err = decodeJSON(postJSON(`{"count":1.5,"tags":{"a":{"count":300000000000000000000}},"nested":{"k":["x"]}}`, "application/json"), testLimit, &into)
	p := problemOf(t, err)
	want := []reply.FieldError{
		{Field: "count", Message: "expected an integer that fits in int, got a number"},
		{Field: "tags.a.count", Message: "expected an integer that fits in int, got a number"},
		{Field: "nested.k[0]", Message: "expected a number, got a string"},
	}
	if !slices.Equal(p.Errors, want) {
		t.Errorf("errors = %v, want %v", p.Errors, want)
	}
}

func TestDecodeJSONRejectsNonPointerTarget(t *testing.T) {
	var into referralRequest
	for _, target := range []any{into, nil, (*referralRequest)(nil)} {
		_, err := decodeJSON(postJSON(`{}`, "application/json"), testLimit, target)
		var re *reply.RequestError
		if err == nil || errors.As(err, &re) {
			t.Errorf("decodeJSON(%T) err = %v, want a programming (non-request) error", target, err)
		}
	}
}
