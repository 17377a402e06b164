package scenarios

import (
	"fmt"
	"testing"
)

func TestForcible(t *testing.T) {
	tests := []struct {
		endpoint   Endpoint
		wantStatus string
		wantErrors string
	}{
		{EndpointAPI, "[401 403 429 500 503]", "[]"},
		{EndpointPing, "[401 403 429 500 503]", "[]"},
		{EndpointAny, "[401 403 429 500 503]", "[]"},
		{EndpointService, "[401 403 429 500 503]", "[]"},
		{EndpointToken, "[429 503]", "[invalid_client invalid_grant invalid_scope]"},
		{"admin", "[]", "[]"},
	}
	for _, tt := range tests {
		t.Run(string(tt.endpoint), func(t *testing.T) {
			if got := fmt.Sprint(ForcibleStatuses(tt.endpoint)); got != tt.wantStatus {
				t.Errorf("ForcibleStatuses = %s, want %s", got, tt.wantStatus)
			}
			if got := fmt.Sprint(ForcibleErrors(tt.endpoint)); got != tt.wantErrors {
				t.Errorf("ForcibleErrors = %s, want %s", got, tt.wantErrors)
			}
		})
	}
	for code, want := range map[string]int{ErrorInvalidClient: 401, ErrorInvalidScope: 400, ErrorInvalidGrant: 400, "other": 0} {
		if got := ErrorStatus(code); got != want {
			t.Errorf("ErrorStatus(%q) = %d, want %d", code, got, want)
		}
	}
}

// TestEndpointMatches: "service" is the service's API and its ping, not
// its identity provider.
func TestEndpointMatches(t *testing.T) {
	for _, tt := range []struct {
		rule, got Endpoint
		want      bool
	}{
		{EndpointService, EndpointAPI, true},
		{EndpointService, EndpointPing, true},
		{EndpointService, EndpointToken, false},
		{EndpointAPI, EndpointPing, false},
		{EndpointAny, EndpointToken, true},
		{"", EndpointPing, true},
	} {
		if got := tt.rule.matches(tt.got); got != tt.want {
			t.Errorf("a %q rule matches a %q request: %v, want %v", tt.rule, tt.got, got, tt.want)
		}
	}
}

// TestThrottlingReachesTheTokenEndpointOnlyByName: a 429 rule for "any"
// endpoint (the rate-limit scenarios) leaves token requests alone; one
// naming the token endpoint throttles it.
func TestThrottlingReachesTheTokenEndpointOnlyByName(t *testing.T) {
	tests := []struct {
		rule   Endpoint
		status int
		got    Endpoint
		want   bool
	}{
		{EndpointToken, 429, EndpointToken, true},
		{EndpointAny, 429, EndpointToken, false},
		{"", 429, EndpointToken, false},
		{EndpointAny, 429, EndpointAPI, true},
		{EndpointAny, 503, EndpointToken, true},
		{EndpointAny, 401, EndpointToken, false},
	}
	for _, tt := range tests {
		if got := appliesTo(tt.rule, tt.status, tt.got); got != tt.want {
			t.Errorf("appliesTo(%q, %d, %q) = %v, want %v", tt.rule, tt.status, tt.got, got, tt.want)
		}
	}
}
