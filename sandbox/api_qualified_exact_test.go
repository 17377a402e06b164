package sandbox_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

// TestQualifiedAnswerExactly pins the whole answer to a qualified POST,
// byte for byte: the 201 with the record (every member of a submission,
// HTML-escaped characters, the audit trail) and its Location, and the 409
// of a resend. Whatever the write path does to be fast, a client sees this.
func TestQualifiedAnswerExactly(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
	s := newSandbox(t, func(c *sandboxConfig) {
		c.Clock = clock.NewAdjustable(func() time.Time { return at })
	})
	token := s.token(partner)
	body := `{"externalSourceId":"exact-1","trialId":"NCT05550001",` +
		`"patient":{"firstName":"Zoë","lastName":"O'Neil","dateOfBirth":"1980-04-12","gender":"female","email":"zoe@example.com","phone":"+15555550100","postalCode":"02139"},` +
		`"address":{"line1":"1 <Main> St & Co","city":"Boston","state":"MA","postalCode":"02139","country":"US"},` +
		`"conditions":[{"code":"I50.9","system":"ICD-10-CM","display":"Heart failure"}],` +
		`"medications":[{"code":"197361","system":"RxNorm"}],` +
		`"qualification":{"qualifiedOn":"2026-03-01","criteriaMet":["age","diagnosis"],"screenerName":"Dr. Who"}}`
	post := func(id string) *response {
		return s.do(request{method: http.MethodPost, path: "/api/v1/referrals/qualified", token: token, body: body,
			headers: map[string]string{"X-Request-Id": id}})
	}

	created := post("req-exact-1")
	wantAnswer(t, created, http.StatusCreated, map[string]string{
		"Content-Length": "816",
		"Content-Type":   "application/json",
		"Location":       "/api/v1/referrals/qualified/exact-1",
		"X-Request-Id":   "req-exact-1",
	}, `{"externalSourceId":"exact-1","trialId":"TRIAL-ONCO-002","clientId":"sandbox-partner","status":"received","submittedAt":"2026-03-04T05:06:07.123456Z",`+
		`"patient":{"firstName":"Zoë","lastName":"O'Neil","dateOfBirth":"1980-04-12","gender":"female","email":"zoe@example.com","phone":"+15555550100","postalCode":"02139"},`+
		`"address":{"line1":"1 \u003cMain\u003e St \u0026 Co","city":"Boston","state":"MA","postalCode":"02139","country":"US"},`+
		`"conditions":[{"code":"I50.9","system":"ICD-10-CM","display":"Heart failure"}],`+
		`"medications":[{"code":"197361","system":"RxNorm"}],`+
		`"qualification":{"qualifiedOn":"2026-03-01","criteriaMet":["age","diagnosis"],"screenerName":"Dr. Who"},`+
		`"auditTrail":[{"at":"2026-03-04T05:06:07.123456Z","action":"submitted","actor":"sandbox-partner","requestId":"req-exact-1"}],"auditTrailTotal":1}`+"\n")

	again := post("req-exact-2")
	wantAnswer(t, again, http.StatusConflict, map[string]string{
		"Content-Length":         "258",
		"Content-Type":           "application/problem+json",
		"Location":               "/api/v1/referrals/qualified/exact-1",
		"X-Content-Type-Options": "nosniff",
		"X-Request-Id":           "req-exact-2",
	}, `{"type":"urn:referrals-sandbox:problem:conflict","title":"Conflict","status":409,`+
		`"detail":"a qualified referral with this externalSourceId was already submitted; it is at the Location header",`+
		`"instance":"/api/v1/referrals/qualified","traceId":"req-exact-2"}`+"\n")
}

// wantAnswer checks a response's status, its headers (all but Date, which
// net/http sets) and its body, exactly.
func wantAnswer(t *testing.T, r *response, status int, header map[string]string, body string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("status %d, want %d", r.Status, status)
	}
	var names []string
	for name := range r.Header {
		if name != "Date" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if got := strings.Join(r.Header[name], ", "); header[name] != got || len(r.Header[name]) != 1 {
			t.Errorf("header %s: %q, want %q", name, r.Header[name], header[name])
		}
	}
	for name := range header {
		if r.Header.Get(name) == "" {
			t.Errorf("no header %s, want %q", name, header[name])
		}
	}
	if string(r.Body) != body {
		t.Errorf("body\n%s\nwant\n%s", r.Body, body)
	}
}
