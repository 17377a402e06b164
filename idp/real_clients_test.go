package idp_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// TestCorrelationIDFromQuery: MSAL for JavaScript sends client-request-id as
// a query parameter; the error body's correlation id must be that value on
// every IdP endpoint, and the header wins when both are sent.
func TestCorrelationIDFromQuery(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	const fromQuery, fromHeader = "0b6d3c1e-8a2f-4d5b-9c7e-1f2a3b4c5d6e", "7e6d5c4b-3a2f-4e1d-8c0b-9a8f7e6d5c4b"
	wrong := postForm(partnerID, "wrong", defaultScope)
	tests := []struct {
		name   string
		req    tokenRequest
		want   wantError
		header bool
	}{
		{"token endpoint", tokenRequest{path: tokenPath() + "?client-request-id=" + fromQuery, form: wrong}, wantError{http.StatusUnauthorized, idp.CodeInvalidClient, 7000215}, false},
		{"token endpoint, header and query", tokenRequest{path: tokenPath() + "?client-request-id=" + fromQuery, form: wrong,
			header: map[string]string{"client-request-id": fromHeader}}, wantError{http.StatusUnauthorized, idp.CodeInvalidClient, 7000215}, true},
		{"tenant-less token endpoint", tokenRequest{path: "/oauth2/v2.0/token?client-request-id=" + fromQuery, form: wrong}, wantError{http.StatusUnauthorized, idp.CodeInvalidClient, 7000215}, false},
		{"discovery of an unknown tenant", tokenRequest{method: http.MethodGet, path: "/00000000-1111-2222-3333-444444444444/v2.0/.well-known/openid-configuration?client-request-id=" + fromQuery}, wantError{http.StatusBadRequest, idp.CodeInvalidTenant, 90002}, false},
		{"keys, wrong method", tokenRequest{path: "/" + idp.DefaultTenant + "/discovery/v2.0/keys?client-request-id=" + fromQuery}, wantError{http.StatusMethodNotAllowed, idp.CodeInvalidRequest, 0}, false},
		{"instance discovery, wrong method", tokenRequest{path: "/common/discovery/instance?client-request-id=" + fromQuery}, wantError{http.StatusMethodNotAllowed, idp.CodeInvalidRequest, 0}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := s.do(t, tc.req)
			b := checkTokenError(t, rep, tc.want, fixedTime())
			want := fromQuery
			if tc.header {
				want = fromHeader
			}
			if b.CorrelationID != want || rep.header.Get("client-request-id") != want {
				t.Errorf("correlation_id %q, client-request-id header %q, want %q", b.CorrelationID, rep.header.Get("client-request-id"), want)
			}
		})
	}
	// A success answers with the caller's id too.
	rep := s.do(t, tokenRequest{path: tokenPath() + "?client-request-id=" + fromQuery, form: postForm(partnerID, partnerSecret, defaultScope)})
	if rep.status != http.StatusOK || rep.header.Get("client-request-id") != fromQuery {
		t.Errorf("token success: %d client-request-id %q, want 200 %s", rep.status, rep.header.Get("client-request-id"), fromQuery)
	}
}

// instanceDoc fetches instance discovery for an authorization endpoint.
func instanceDoc(t *testing.T, s *sandbox, endpoint string) (tenantDiscovery string, aliases []string) {
	t.Helper()
	rep := s.get(t, "/common/discovery/instance?api-version=1.1&authorization_endpoint="+url.QueryEscape(endpoint))
	if rep.status != http.StatusOK {
		t.Fatalf("instance discovery for %s: %d %s", endpoint, rep.status, rep.body)
	}
	var doc struct {
		TenantDiscoveryEndpoint string `json:"tenant_discovery_endpoint"`
		Metadata                []struct {
			Aliases []string `json:"aliases"`
		} `json:"metadata"`
	}
	mustJSON(t, rep.body, &doc)
	if len(doc.Metadata) != 1 {
		t.Fatalf("metadata %+v, want one entry", doc.Metadata)
	}
	return doc.TenantDiscoveryEndpoint, doc.Metadata[0].Aliases
}

// TestInstanceDiscoveryRealPortAndTenant: MSAL for Python drops the port of
// a sandbox authority; the answer puts the sandbox's real port back. The
// tenant is the one the client asked for, so a wrong tenant fails at the
// discovery document (AADSTS90002) instead of silently becoming the
// sandbox's.
func TestInstanceDiscoveryRealPortAndTenant(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, func(c *idp.Config) { c.Hosts = []string{"sandbox"} })
	port := s.server.URL[strings.LastIndex(s.server.URL, ":")+1:]
	const unknown = "00000000-1111-2222-3333-444444444444"
	tests := []struct {
		name, endpoint, want string
	}{
		{"localhost without a port", "https://localhost/" + idp.DefaultTenant + "/oauth2/v2.0/authorize",
			"http://localhost:" + port + "/" + idp.DefaultTenant + "/v2.0/.well-known/openid-configuration"},
		{"127.0.0.1 without a port", "https://127.0.0.1/" + idp.DefaultTenant + "/oauth2/v2.0/authorize",
			"http://127.0.0.1:" + port + "/" + idp.DefaultTenant + "/v2.0/.well-known/openid-configuration"},
		{"a --tls-host name without a port", "https://sandbox/" + idp.DefaultTenant + "/oauth2/v2.0/authorize",
			"http://sandbox:" + port + "/" + idp.DefaultTenant + "/v2.0/.well-known/openid-configuration"},
		{"a port is kept", "https://localhost:8443/" + idp.DefaultTenant + "/oauth2/v2.0/authorize",
			"https://localhost:8443/" + idp.DefaultTenant + "/v2.0/.well-known/openid-configuration"},
		{"another host is echoed", "https://login.microsoftonline.com/" + idp.DefaultTenant + "/oauth2/v2.0/authorize",
			"https://login.microsoftonline.com/" + idp.DefaultTenant + "/v2.0/.well-known/openid-configuration"},
		{"an unknown tenant is echoed", s.server.URL + "/" + unknown + "/oauth2/v2.0/authorize",
			s.server.URL + "/" + unknown + "/v2.0/.well-known/openid-configuration"},
		{"organizations is echoed", s.server.URL + "/organizations/oauth2/v2.0/authorize",
			s.server.URL + "/organizations/v2.0/.well-known/openid-configuration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := instanceDoc(t, s, tc.endpoint)
			if got != tc.want {
				t.Errorf("tenant_discovery_endpoint %q, want %q", got, tc.want)
			}
		})
	}
	// Following the answer for an unknown tenant fails as Entra does.
	got, _ := instanceDoc(t, s, s.server.URL+"/"+unknown+"/oauth2/v2.0/authorize")
	rep := s.get(t, strings.TrimPrefix(got, s.server.URL))
	checkTokenError(t, rep, wantError{http.StatusBadRequest, idp.CodeInvalidTenant, 90002}, fixedTime())
	rep = s.do(t, tokenRequest{path: "/" + unknown + "/oauth2/v2.0/token", form: postForm(partnerID, partnerSecret, defaultScope)})
	checkTokenError(t, rep, wantError{http.StatusBadRequest, idp.CodeInvalidTenant, 90002}, fixedTime())
}

// TestTenantIndependentAuthorities: common, organizations and consumers have
// discovery documents with Entra's issuer template, but client credentials
// on them fail as on Entra: /common and /consumers with AADSTS9001023,
// /organizations (the sandbox's applications are single-tenant) with
// AADSTS50194.
func TestTenantIndependentAuthorities(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for tenant, aadsts := range map[string]int{"common": 9001023, "consumers": 9001023, "organizations": 50194} {
		t.Run(tenant, func(t *testing.T) {
			rep := s.get(t, "/"+tenant+"/v2.0/.well-known/openid-configuration")
			if rep.status != http.StatusOK {
				t.Fatalf("discovery: %d %s", rep.status, rep.body)
			}
			var doc struct {
				Issuer        string `json:"issuer"`
				TokenEndpoint string `json:"token_endpoint"`
			}
			mustJSON(t, rep.body, &doc)
			if doc.Issuer != s.server.URL+"/{tenantid}/v2.0" || doc.TokenEndpoint != s.server.URL+"/"+tenant+"/oauth2/v2.0/token" {
				t.Errorf("issuer %q token_endpoint %q", doc.Issuer, doc.TokenEndpoint)
			}
			rep = s.do(t, tokenRequest{path: "/" + tenant + "/oauth2/v2.0/token", form: postForm(partnerID, partnerSecret, defaultScope)})
			b := checkTokenError(t, rep, wantError{http.StatusBadRequest, idp.CodeInvalidRequest, aadsts}, fixedTime())
			if !strings.Contains(b.ErrorDescription, "tenant-specific") {
				t.Errorf("description %q does not say to use the tenant-specific endpoint", b.ErrorDescription)
			}
		})
	}
}
