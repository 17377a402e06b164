package idp

import "net/url"

// OwnIssuer reports whether iss is an issuer this sandbox issues under:
// http or https, one of its HostNames on any port, and its tenant. Real
// Entra has one issuer however it is reached; the sandbox builds the issuer
// from the address a client used (MSAL requires the discovery document's
// issuer to be on the authority's host), so a token fetched through
// 127.0.0.1 must be valid through localhost, a --tls-host name or the
// --public-url host, and the reverse. Both token formats' issuers are
// accepted ({tenant}/v2.0 and {tenant}/), so a token issued before a
// restart with the other --token-version stays valid.
func (p *Provider) OwnIssuer(iss string) bool {
	u, err := url.Parse(iss)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	return (u.Path == "/"+p.cfg.Tenant+"/v2.0" || u.Path == "/"+p.cfg.Tenant+"/") && p.names.Serves(u.Host)
}
