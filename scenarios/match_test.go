package scenarios

import "testing"

func TestRuleMatches(t *testing.T) {
	api := func(method, path, client string) Request {
		return Request{Method: method, Path: path, ClientID: client, Endpoint: EndpointAPI}
	}
	tests := []struct {
		name string
		rule Rule
		req  Request
		want bool
	}{
		{"no matchers", Rule{Status: 503}, api("GET", "/api/v1/referrals/trials", "a"), true},
		{"method equal", Rule{Method: "POST", Status: 503}, api("POST", "/x", "a"), true},
		{"method any case", Rule{Method: "post", Status: 503}, api("POST", "/x", "a"), true},
		{"method differs", Rule{Method: "POST", Status: 503}, api("GET", "/x", "a"), false},
		{"exact path", Rule{Path: "/api/v1/referrals/trials", Status: 503}, api("GET", "/api/v1/referrals/trials", "a"), true},
		{"exact path differs", Rule{Path: "/api/v1/referrals/trials", Status: 503}, api("GET", "/api/v1/referrals/qualified", "a"), false},
		{"trailing slash significant", Rule{Path: "/api/v1/referrals/", Status: 503}, api("GET", "/api/v1/referrals", "a"), false},
		{"star segments", Rule{Path: "/api/v1/referrals/*/*", Status: 503}, api("GET", "/api/v1/referrals/TR-1/OUT-9", "a"), true},
		{"star needs the segment", Rule{Path: "/api/v1/referrals/*/*", Status: 503}, api("GET", "/api/v1/referrals/TR-1", "a"), false},
		{"star is one segment", Rule{Path: "/api/v1/referrals/*", Status: 503}, api("GET", "/api/v1/referrals/TR-1/OUT-9", "a"), false},
		{"star not empty", Rule{Path: "/api/v1/referrals/*", Status: 503}, api("GET", "/api/v1/referrals/", "a"), false},
		{"star middle", Rule{Path: "/api/*/referrals/trials", Status: 503}, api("GET", "/api/v1/referrals/trials", "a"), true},
		{"client equal", Rule{ClientID: "a", Status: 503}, api("GET", "/x", "a"), true},
		{"client differs", Rule{ClientID: "a", Status: 503}, api("GET", "/x", "b"), false},
		{"client needed", Rule{ClientID: "a", Status: 503}, api("GET", "/x", ""), false},
		{"endpoint api on ping", Rule{Endpoint: EndpointAPI, Status: 503}, Request{Endpoint: EndpointPing}, false},
		{"endpoint ping", Rule{Endpoint: EndpointPing, Status: 503}, Request{Endpoint: EndpointPing}, true},
		{"endpoint token", Rule{Endpoint: EndpointToken, Status: 503}, Request{Endpoint: EndpointToken}, true},
		{"endpoint any on token", Rule{Endpoint: EndpointAny, Status: 503}, Request{Endpoint: EndpointToken}, true},
		{"endpoint empty on ping", Rule{Status: 503}, Request{Endpoint: EndpointPing}, true},
		{"any delay on token", Rule{Endpoint: EndpointAny, Delay: &Delay{Fixed: 1}}, Request{Endpoint: EndpointToken}, true},
		{"any 401 skips token", Rule{Endpoint: EndpointAny, Status: 401}, Request{Endpoint: EndpointToken}, false},
		{"any 401 on api", Rule{Endpoint: EndpointAny, Status: 401}, Request{Endpoint: EndpointAPI}, true},
		{"all matchers", Rule{Method: "GET", Path: "/health/*", ClientID: "a", Endpoint: EndpointPing, Status: 429}, Request{Method: "GET", Path: "/health/ping", ClientID: "a", Endpoint: EndpointPing}, true},
		{"all but one", Rule{Method: "GET", Path: "/health/*", ClientID: "a", Endpoint: EndpointPing, Status: 429}, Request{Method: "GET", Path: "/health/ping", ClientID: "b", Endpoint: EndpointPing}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.rule.Validate(); err != nil {
				t.Fatalf("test rule invalid: %v", err)
			}
			if got := tt.rule.Matches(tt.req); got != tt.want {
				t.Errorf("Matches(%+v) = %v, want %v", tt.req, got, tt.want)
			}
		})
	}
}
