package idp

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gorilla/mux"
)

// openIDConfiguration is the subset of Entra's discovery document that
// clients read. MSAL needs authorization_endpoint, token_endpoint and an
// issuer on the authority's scheme and host.
type openIDConfiguration struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	IDTokenSigningAlgValuesSupported  []string `json:"id_token_signing_alg_values_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	SubjectTypesSupported             []string `json:"subject_types_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	TenantRegionScope                 *string  `json:"tenant_region_scope"`
	CloudInstanceName                 string   `json:"cloud_instance_name"`
}

func (p *Provider) serveOpenIDConfiguration(w http.ResponseWriter, r *http.Request) {
	if !p.checkDiscoveryRequest(w, r) {
		return
	}
	base := p.BaseURL(r)
	// A tenant-independent authority gets its own endpoints (whose token
	// endpoint then refuses client credentials as Entra does) and Entra's
	// issuer template.
	tenant := p.canonicalTenant(mux.Vars(r)["tenant"])
	// The v2.0 document names the v2.0 issuer whatever format the tokens
	// have, as Entra's does: clients such as openid-client require it to
	// be the URL they discovered from ({authority}/v2.0).
	issuer, authURL := v2Issuer(base, p.cfg.Tenant), base+"/"+tenant
	if tenantIndependent(tenant) {
		issuer = v2Issuer(base, issuerTemplateTenant)
	}
	w.Header().Set("client-request-id", CorrelationID(r))
	writeJSON(w, openIDConfiguration{
		Issuer:                            issuer,
		AuthorizationEndpoint:             authURL + "/oauth2/v2.0/authorize",
		TokenEndpoint:                     authURL + "/oauth2/v2.0/token",
		JWKSURI:                           authURL + "/discovery/v2.0/keys",
		TokenEndpointAuthMethodsSupported: []string{"client_secret_post", "client_secret_basic"},
		IDTokenSigningAlgValuesSupported:  []string{"RS256"},
		ResponseTypesSupported:            []string{"code", "id_token", "code id_token", "id_token token"},
		SubjectTypesSupported:             []string{"pairwise"},
		GrantTypesSupported:               []string{"client_credentials"},
		ScopesSupported:                   []string{"openid", "profile", "email", "offline_access"},
		CloudInstanceName:                 "referrals-sandbox",
	})
}

func (p *Provider) serveKeys(w http.ResponseWriter, r *http.Request) {
	if !p.checkDiscoveryRequest(w, r) {
		return
	}
	set, err := p.cfg.Keys.PublicSet()
	if err != nil {
		p.log.Error("publish the signing key", "err", err)
		WriteTokenError(w, r, p.cfg.Clock.Now(), &TokenError{http.StatusInternalServerError, "server_error", 90100, "The signing keys could not be published."})
		return
	}
	writeJSON(w, set)
}

// checkDiscoveryRequest answers wrong methods and unknown tenants as Entra
// does, and reports whether the request may go on.
func (p *Provider) checkDiscoveryRequest(w http.ResponseWriter, r *http.Request) bool {
	if !p.checkGet(w, r) {
		return false
	}
	if tenant := p.canonicalTenant(mux.Vars(r)["tenant"]); tenant != p.cfg.Tenant && !tenantIndependent(tenant) {
		WriteTokenError(w, r, p.cfg.Clock.Now(), errUnknownTenant(p.redactor.Log(tenant)))
		return false
	}
	return true
}

// checkGet answers a method other than GET or HEAD with 405.
func (p *Provider) checkGet(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	WriteTokenError(w, r, p.cfg.Clock.Now(), &TokenError{http.StatusMethodNotAllowed, CodeInvalidRequest, 900561,
		"The endpoint only accepts GET requests. Received a " + r.Method + " request."})
	return false
}

// instanceDiscovery is the answer MSAL expects from
// /common/discovery/instance: where the tenant's discovery document is, and
// which host names are aliases of the authority.
type instanceDiscovery struct {
	TenantDiscoveryEndpoint string             `json:"tenant_discovery_endpoint"`
	APIVersion              string             `json:"api-version"`
	Metadata                []instanceMetadata `json:"metadata"`
}

type instanceMetadata struct {
	PreferredNetwork string   `json:"preferred_network"`
	PreferredCache   string   `json:"preferred_cache"`
	Aliases          []string `json:"aliases"`
}

// serveInstanceDiscovery answers MSAL's instance discovery. MSAL sends the
// authority it was configured with as authorization_endpoint; the sandbox
// points it back at that authority's own discovery document, for the tenant
// the client asked for (an unknown one then fails at discovery with
// AADSTS90002, as on Entra), so a client whose traffic for
// login.microsoftonline.com is routed to the sandbox discovers the sandbox.
func (p *Provider) serveInstanceDiscovery(w http.ResponseWriter, r *http.Request) {
	if !p.checkGet(w, r) {
		return
	}
	query, terr := strictDiscoveryQuery(r.URL.RawQuery)
	if terr != nil {
		WriteTokenError(w, r, p.cfg.Clock.Now(), terr)
		return
	}
	base, tenant := p.BaseURL(r), p.cfg.Tenant
	host := strings.TrimPrefix(strings.TrimPrefix(base, "https://"), "http://")
	if endpoint, err := url.Parse(query.Get("authorization_endpoint")); err == nil && endpoint.Host != "" {
		if first, _, _ := strings.Cut(strings.TrimPrefix(endpoint.Path, "/"), "/"); first != "" {
			tenant = first
		}
		if p.cfg.PublicURL == "" {
			base, host = p.instanceBase(r, endpoint)
		}
	}
	w.Header().Set("client-request-id", CorrelationID(r))
	writeJSON(w, instanceDiscovery{
		TenantDiscoveryEndpoint: base + "/" + tenant + "/v2.0/.well-known/openid-configuration",
		APIVersion:              "1.1",
		Metadata:                []instanceMetadata{{PreferredNetwork: host, PreferredCache: host, Aliases: []string{host}}},
	})
}

// instanceBase is the scheme and host a client's authority names. MSAL for
// Python drops the port from the authority it sends: when the host is one
// of the sandbox's own names and has no port, the sandbox's real scheme and
// port are put back, or MSAL would go on to port 443.
func (p *Provider) instanceBase(r *http.Request, endpoint *url.URL) (base, host string) {
	host = endpoint.Host
	if endpoint.Port() != "" || !p.names.Serves(host) {
		return endpoint.Scheme + "://" + host, host
	}
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	if !ok {
		return endpoint.Scheme + "://" + host, host
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host = net.JoinHostPort(endpoint.Hostname(), strconv.Itoa(addr.Port))
	return scheme + "://" + host, host
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

// strictDiscoveryQuery parses instance discovery's query, refusing what
// url.Values would silently drop or pick from: a malformed escape or a
// parameter given twice (which authority would win is a guess). Entra
// answers a malformed request with invalid_request.
func strictDiscoveryQuery(raw string) (url.Values, *TokenError) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, &TokenError{http.StatusBadRequest, CodeInvalidRequest, 90023, "The query string is not well-formed: percent-encode reserved characters."}
	}
	for name, values := range q {
		if len(values) > 1 {
			return nil, &TokenError{http.StatusBadRequest, CodeInvalidRequest, 90023, fmt.Sprintf("The query parameter '%s' is given more than once; give it once.", clip(name))}
		}
	}
	return q, nil
}
