package sandbox_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// A forced answer carries the RateLimit-* headers a real answer of the
// same client would: the client's real limit, never "RateLimit-Limit: 0".
func TestForcedAnswersCarryTheClientsRateLimit(t *testing.T) {
	s := newSandbox(t, withRateLimit(10, 20))
	token := s.token(partner)
	real := s.do(request{path: pingPath, token: token})
	if real.Status != http.StatusOK || real.Header.Get("RateLimit-Limit") != "20" {
		t.Fatalf("real ping: %d RateLimit-Limit %q, want 200 and 20", real.Status, real.Header.Get("RateLimit-Limit"))
	}
	for _, status := range []int{401, 403, 429, 500, 503} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			for _, path := range []string{pingPath, trialsPath} {
				r := s.as(t).do(request{path: path, token: token, headers: map[string]string{sandbox.ForceStatusHeader: strconv.Itoa(status)}})
				if r.Status != status {
					t.Fatalf("%s: status %d, want %d", path, r.Status, status)
				}
				if got := r.Header.Get("RateLimit-Limit"); got != "20" {
					t.Errorf("%s: RateLimit-Limit %q, want the client's real 20", path, got)
				}
				remaining, err := strconv.Atoi(r.Header.Get("RateLimit-Remaining"))
				if err != nil || remaining < 0 || remaining > 20 {
					t.Errorf("%s: RateLimit-Remaining %q, want 0 to 20", path, r.Header.Get("RateLimit-Remaining"))
				}
				if status == http.StatusTooManyRequests && (remaining != 0 || r.Header.Get("RateLimit-Reset") != r.Header.Get("Retry-After")) {
					t.Errorf("%s: forced 429 says %d remaining, reset %q, Retry-After %q; want 0 until Retry-After",
						path, remaining, r.Header.Get("RateLimit-Reset"), r.Header.Get("Retry-After"))
				}
				if status != http.StatusTooManyRequests && r.Header.Get("RateLimit-Reset") == "" {
					t.Errorf("%s: no RateLimit-Reset", path)
				}
			}
		})
	}
}

// A refused X-Sandbox-* value on the API is an API answer too: it carries
// the client's RateLimit-* headers, as docs/api.md says every API answer does.
func TestRefusedSandboxHeadersCarryTheClientsRateLimit(t *testing.T) {
	s := newSandbox(t, withRateLimit(10, 20))
	token := s.token(partner)
	for header, value := range map[string]string{
		sandbox.DelayHeader:       "soon",
		sandbox.ForceStatusHeader: "418",
		sandbox.ScenarioHeader:    "no-such-scenario",
	} {
		for _, path := range []string{pingPath, trialsPath} {
			r := s.do(request{path: path, token: token, headers: map[string]string{header: value}, invalid: true})
			if r.Status != http.StatusBadRequest || r.Header.Get("RateLimit-Limit") != "20" || r.Header.Get("RateLimit-Remaining") == "" {
				t.Errorf("%s %s: %d, RateLimit-Limit %q, Remaining %q; want 400 with the client's limit 20",
					path, header, r.Status, r.Header.Get("RateLimit-Limit"), r.Header.Get("RateLimit-Remaining"))
			}
		}
	}
}

// On the token endpoint every refusal is Entra's error body, including a
// bad X-Sandbox-* value: a client parsing token errors always can.
func TestTokenEndpointRefusesBadSandboxHeadersInEntraShape(t *testing.T) {
	s := newSandbox(t)
	form := tokenForm(partner, partner+"-secret", apiScope)
	for header, value := range map[string]string{
		sandbox.ForceStatusHeader: "403", // the token endpoint cannot give a 403
		sandbox.ScenarioHeader:    "no-such-scenario",
		sandbox.DelayHeader:       "forever",
	} {
		t.Run(header, func(t *testing.T) {
			r := s.as(t).postToken(form, map[string]string{header: value, "client-request-id": "0b6f2c9e-1d2a-4c3b-9e8f-7a6b5c4d3e2f"})
			checkEntraError(t, r, http.StatusBadRequest, "invalid_request")
			var body struct {
				CorrelationID    string `json:"correlation_id"`
				ErrorDescription string `json:"error_description"`
			}
			r.decode(t, &body)
			if body.CorrelationID != "0b6f2c9e-1d2a-4c3b-9e8f-7a6b5c4d3e2f" {
				t.Errorf("correlation_id %q, want the client-request-id", body.CorrelationID)
			}
			if !strings.HasPrefix(body.ErrorDescription, "AADSTS90023: ") || !strings.Contains(body.ErrorDescription, header) {
				t.Errorf("error_description %q should carry AADSTS90023 and name %s", body.ErrorDescription, header)
			}
		})
	}
}

// The named scenarios cover every operation the interface lists their
// status for: 429 is listed for the ping (4.3), 401 and 403 for the
// trials and the ping; the token endpoint is left alone.
func TestNamedScenariosCoverThePing(t *testing.T) {
	s := newSandbox(t)
	token := s.token(partner)
	for name, status := range map[string]int{"rate-limited": 429, "permissions-revoked": 403, "token-expired": 401} {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{pingPath, trialsPath} {
				r := s.as(t).do(request{path: path, token: token, headers: map[string]string{sandbox.ScenarioHeader: name}})
				if r.Status != status {
					t.Errorf("%s with %s: %d, want %d", path, name, r.Status, status)
				}
			}
			r := s.as(t).postToken(tokenForm(partner, partner+"-secret", apiScope), map[string]string{sandbox.ScenarioHeader: name})
			if r.Status != http.StatusOK {
				t.Errorf("token request with %s: %d %s, want 200", name, r.Status, r.Body)
			}
		})
	}
}
