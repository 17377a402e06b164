package scenarios

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRuleValidate(t *testing.T) {
	ms := func(n int) Duration { return Duration(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		name      string
		rule      Rule
		wantField string // "" means valid
		wantIn    string // substring of the message
	}{
		{"api 503", Rule{Endpoint: EndpointAPI, Status: 503}, "", ""},
		{"ping 429 retry", Rule{Endpoint: EndpointPing, Status: 429, RetryAfterSeconds: 3}, "", ""},
		{"token 503", Rule{Endpoint: EndpointToken, Status: 503}, "", ""},
		{"token error", Rule{Endpoint: EndpointToken, Error: ErrorInvalidScope, Reason: "scope not granted"}, "", ""},
		{"any status", Rule{Status: 500}, "", ""},
		{"delay only", Rule{Delay: &Delay{Fixed: ms(250)}}, "", ""},
		{"uniform", Rule{Delay: &Delay{Min: ms(10), Max: ms(20)}}, "", ""},
		{"lognormal", Rule{Delay: &Delay{Median: ms(100), Sigma: 0.5, Max: ms(900)}}, "", ""},
		{"fault with delay", Rule{Fault: FaultReset, Delay: &Delay{Fixed: ms(5)}}, "", ""},
		{"full matchers", Rule{ID: "ci-1", Method: "get", Path: "/api/v1/referrals/*/*", ClientID: "c", Endpoint: EndpointAPI, Status: 401, Reason: "expired", Times: 1, PerClient: true}, "", ""},
		{"counting", Rule{Status: 503, Times: 3, After: 2, Probability: 0.5, Seed: 9}, "", ""},

		{"does nothing", Rule{Endpoint: EndpointAPI}, "rule", "at least one"},
		{"teapot", Rule{Endpoint: EndpointAPI, Status: 418}, "status", `418 cannot be forced on endpoint "api"; allowed: 401, 403, 429, 500, 503`},
		{"401 on token", Rule{Endpoint: EndpointToken, Status: 401}, "status", "allowed: 429, 503"},
		{"200 on any", Rule{Status: 200}, "status", `endpoint "any"`},
		{"error on api", Rule{Endpoint: EndpointAPI, Error: ErrorInvalidClient}, "error", "token endpoint"},
		{"unknown error", Rule{Endpoint: EndpointToken, Error: "server_error"}, "error", "invalid_client, invalid_grant, invalid_scope"},
		{"status and error", Rule{Endpoint: EndpointToken, Status: 503, Error: ErrorInvalidGrant}, "error", "combined with status"},
		{"status and fault", Rule{Status: 503, Fault: FaultHang}, "fault", "combined"},
		{"unknown fault", Rule{Fault: "explode"}, "fault", "explode"},
		{"bad endpoint", Rule{Endpoint: "admin", Status: 503}, "endpoint", "admin"},
		{"bad method", Rule{Method: "GET /", Status: 503}, "method", "HTTP method"},
		{"relative path", Rule{Path: "api/v1", Status: 503}, "path", "start with /"},
		{"partial wildcard", Rule{Path: "/api/v1/referrals/TR*", Status: 503}, "path", "whole segment"},
		{"query in path", Rule{Path: "/api/v1/referrals?x=1", Status: 503}, "path", "query"},
		{"retry on 500", Rule{Status: 500, RetryAfterSeconds: 2}, "retryAfterSeconds", "429 or 503"},
		{"negative retry", Rule{Status: 503, RetryAfterSeconds: -1}, "retryAfterSeconds", "between"},
		{"reason alone", Rule{Delay: &Delay{Fixed: ms(1)}, Reason: "expired"}, "reason", "status or error"},
		{"reason control", Rule{Status: 401, Reason: "a\nb"}, "reason", "control"},
		{"negative times", Rule{Status: 503, Times: -1}, "times", "negative"},
		{"negative after", Rule{Status: 503, After: -2}, "after", "negative"},
		{"probability > 1", Rule{Status: 503, Probability: 1.5}, "probability", "between 0 and 1"},
		{"perClient alone", Rule{Status: 401, PerClient: true}, "perClient", "times or after"},
		{"bad id", Rule{ID: "a/b", Status: 503}, "id", "letters"},
		{"empty delay", Rule{Delay: &Delay{}}, "delay", "fixed, min and max"},
		{"fixed and min", Rule{Delay: &Delay{Fixed: ms(5), Min: ms(1)}}, "delay.fixed", "cannot be combined"},
		{"min above max", Rule{Delay: &Delay{Min: ms(30), Max: ms(20)}}, "delay.min", "above max"},
		{"min alone", Rule{Delay: &Delay{Min: ms(30)}}, "delay.max", "required"},
		{"sigma alone", Rule{Delay: &Delay{Sigma: 1}}, "delay.median", "required"},
		{"negative fixed", Rule{Delay: &Delay{Fixed: ms(-1)}}, "delay.fixed", "negative"},
		{"huge fixed", Rule{Delay: &Delay{Fixed: Duration(2 * time.Minute)}}, "delay.fixed", "maximum"},
		{"cap below median", Rule{Delay: &Delay{Median: ms(500), Max: ms(100)}}, "delay.max", "below median"},
		{"negative sigma", Rule{Delay: &Delay{Median: ms(500), Sigma: -1}}, "delay.sigma", "between"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rule.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate() = %v, want a *FieldError for %q", err, tt.wantField)
			}
			if fe.Field != tt.wantField {
				t.Errorf("field = %q, want %q (error %q)", fe.Field, tt.wantField, err)
			}
			if !strings.HasPrefix(err.Error(), tt.wantField+": ") || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("error = %q, want it to start with %q and contain %q", err, tt.wantField+": ", tt.wantIn)
			}
		})
	}
}
