package contract

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

var probeParams = map[string]string{
	"tenant": "common", "trial_id": "T", "outcomes_id": "O", "external_source_id": "E", "id": "rule-1", "name": "flaky",
}

// validAdminBody gives the admin operations, whose schemas have no
// example, a valid body.
func validAdminBody(op string) (any, bool) {
	switch op {
	case "addRule":
		return map[string]any{"status": 503}, true
	case "requestToken", "requestTokenWithoutTenant":
		return url.Values{"grant_type": {"client_credentials"}, "scope": {"api://referrals-sandbox/.default"}}, true
	case "moveClock":
		return map[string]any{"advance": "1s"}, true
	case "moveReferralStatus", "moveQualifiedStatus":
		return map[string]any{"status": "reviewing"}, true
	}
	return nil, false
}

func TestProbesCoverFieldsAndParameters(t *testing.T) {
	c := New(t, "http://127.0.0.1:8080")
	probes, err := c.Probes(ProbeInputs{PathParams: probeParams, Body: validAdminBody})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Probe{}
	for _, p := range probes {
		if _, dup := byName[p.Name]; dup {
			t.Errorf("two probes named %q", p.Name)
		}
		byName[p.Name] = p
	}
	for _, want := range []string{
		"POST /api/v1/referrals/ body patient.firstName: null",
		"POST /api/v1/referrals/ body patient.firstName: a number",
		"POST /api/v1/referrals/ body patient.firstName: 100 characters",
		"POST /api/v1/referrals/ body patient.firstName: 101 characters",
		"POST /api/v1/referrals/ body patient.gender: not in the enum",
		`POST /api/v1/referrals/ body patient.dateOfBirth: bad date "2021-02-30"`,
		"POST /api/v1/referrals/ body patient.probeUnknownField: unknown field",
		"POST /api/v1/referrals/ body: an array",
		"POST /api/v1/referrals/qualified body conditions[0].code: empty",
		"POST /__sandbox/scenarios body probability: above the maximum",
		"POST /__sandbox/clock body probeUnknownField: unknown field",
		"GET /api/v1/referrals/ query limit: above the maximum",
		"GET /api/v1/referrals/ query cursor: malformed escape",
		`GET /__sandbox/requests query since: bad date-time "yesterday"`,
		"POST /oauth2/v2.0/token form grant_type: left out",
		"POST /{tenant}/oauth2/v2.0/token form scope: given twice",
	} {
		if _, ok := byName[want]; !ok {
			t.Errorf("no probe %q", want)
		}
	}
	p := byName["POST /api/v1/referrals/ body patient.firstName: 101 characters"]
	if p.Method != "POST" || p.URL != "/api/v1/referrals/" || p.ContentType != "application/json" || !strings.Contains(string(p.Body), strings.Repeat("a", 101)+`"`) {
		t.Errorf("probe %+v", p)
	}
	if u := byName["POST /__sandbox/referrals/{trial_id}/{outcomes_id}/status body status: null"].URL; u != "/__sandbox/referrals/T/O/status" {
		t.Errorf("path parameters filled as %q", u)
	}
	bad := byName["POST /api/v1/referrals/ body notes: invalid UTF-8"]
	if !bad.MustRefuse || utf8.Valid(bad.Body) {
		t.Errorf("the invalid UTF-8 probe is %q (MustRefuse %v)", bad.Body, bad.MustRefuse)
	}
}

// A new operation with a body must not escape the probes silently.
func TestProbesNeedAValidBody(t *testing.T) {
	c := New(t, "http://127.0.0.1:8080")
	_, err := c.Probes(ProbeInputs{PathParams: probeParams})
	if err == nil || !strings.Contains(err.Error(), "there is no valid one") {
		t.Errorf("err = %v, want one naming an operation without a valid body", err)
	}
}
