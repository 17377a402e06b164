package sandbox_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
)

// TestContract_ValidationStopsAtTheCap: a 1 MB submission with 340,000
// invalid items gets a 422 naming the first MaxErrors of them and saying
// that at least that many failed, not that exactly that many did.
func TestContract_ValidationStopsAtTheCap(t *testing.T) {
	s := newSandbox(t, withContract(t, "bounds.json"))
	token := s.token(partner)
	body := `{"trialId":"TRIAL-ONCO-002","tags":[` + strings.TrimSuffix(strings.Repeat("10,", 340000), ",") + `]}`
	got := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, body: body, plain: true})
	if got.Status != http.StatusUnprocessableEntity {
		t.Fatalf("POST: %d %s", got.Status, got.Body)
	}
	var p struct {
		Detail string
		Errors []struct{ Field, Message string }
	}
	got.decode(t, &p)
	if want := "at least 50 field(s) failed validation; see errors"; p.Detail != want || len(p.Errors) != contractdoc.MaxErrors {
		t.Errorf("detail %q with %d errors, want %q with %d", p.Detail, len(p.Errors), want, contractdoc.MaxErrors)
	}
	// Under the cap, the count is exact.
	got = s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, body: `{"trialId":"TRIAL-ONCO-002","tags":[1,2]}`, plain: true})
	got.decode(t, &p)
	if want := "2 field(s) failed validation; see errors"; got.Status != http.StatusUnprocessableEntity || p.Detail != want {
		t.Errorf("two failing items: %d %q, want 422 %q", got.Status, p.Detail, want)
	}
}

// TestContract_NumericFormatsExactly: format int64 takes exactly the int64
// range as written, and format float the float32 magnitude.
func TestContract_NumericFormatsExactly(t *testing.T) {
	s := newSandbox(t, withContract(t, "bounds.json"))
	token := s.token(partner)
	tests := []struct {
		member, number string
		status         int
	}{
		{"count", "9223372036854775807", http.StatusCreated},
		{"count", "9223372036854775808", http.StatusUnprocessableEntity},
		{"weight", "3.4e38", http.StatusCreated},
		{"weight", "1e300", http.StatusUnprocessableEntity},
	}
	for _, tc := range tests {
		got := s.do(request{method: http.MethodPost, path: "/api/v1/referrals/", token: token, plain: true,
			body: `{"trialId":"TRIAL-ONCO-002","` + tc.member + `":` + tc.number + `}`})
		if got.Status != tc.status {
			t.Errorf("%s %s: %d %s, want %d", tc.member, tc.number, got.Status, got.Body, tc.status)
			continue
		}
		if tc.status == http.StatusCreated {
			// Stored as written: the record reads the number back unchanged.
			var record map[string]json.RawMessage
			got.decode(t, &record)
			if string(record[tc.member]) != tc.number {
				t.Errorf("%s read back as %s, want %s", tc.member, record[tc.member], tc.number)
			}
		}
	}
}
