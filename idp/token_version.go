package idp

import (
	"fmt"

	"github.com/google/uuid"
)

// TokenVersion is which of Entra's two access-token formats the sandbox
// issues. On Entra the API's registration decides it
// (accessTokenAcceptedVersion), not the client, so it is one setting per
// instance.
type TokenVersion int

// The two formats (entra-docs access-token-claims-reference.md).
const (
	// TokenV2 is the v2.0 format: iss {base}/{tid}/v2.0, aud the API's
	// application id (a GUID), azp and azpacr, ver "2.0". It matches the
	// v2.0 endpoints and discovery document the sandbox serves, so it is
	// the default.
	TokenV2 TokenVersion = 2
	// TokenV1 is the v1.0 format, which Entra issues when the API's
	// registration leaves accessTokenAcceptedVersion null (the default for
	// a new registration): iss {base}/{tid}/ (Entra's
	// https://sts.windows.net/{tid}/ on the sandbox's own host), aud the
	// App ID URI the scope named, appid and appidacr, ver "1.0".
	TokenV1 TokenVersion = 1
	// DefaultTokenVersion is the format a sandbox issues unless told.
	DefaultTokenVersion = TokenV2
)

// ParseTokenVersion reads a --token-version value: 1 or 2 (also "1.0",
// "2.0", as the ver claim spells them).
func ParseTokenVersion(s string) (TokenVersion, error) {
	switch s {
	case "1", "1.0":
		return TokenV1, nil
	case "2", "2.0":
		return TokenV2, nil
	}
	return 0, fmt.Errorf("token version %q: want 1 or 2", s)
}

// String is the version as the ver claim writes it.
func (v TokenVersion) String() string {
	if v == TokenV1 {
		return "1.0"
	}
	return "2.0"
}

// applicationNamespace derives the application ids of APIs from their App
// ID URIs, so an API keeps the same id across restarts and instances, as an
// app registration does.
var applicationNamespace = uuid.MustParse("3c6e0b8a-9f1d-4d2b-8a7e-5b4c3d2e1f0a")

// ApplicationID is the application (client) id of the API whose App ID URI
// is resource: the aud of the v2.0 tokens issued for it. It is a name-based
// GUID (RFC 9562 version 5) of the URI, the same on every sandbox.
func ApplicationID(resource string) string {
	return uuid.NewSHA1(applicationNamespace, []byte(resource)).String()
}

// TokenVersion is the format this provider issues.
func (p *Provider) TokenVersion() TokenVersion { return p.cfg.TokenVersion }

// Issuer is the iss claim of tokens issued at base: {base}/{tenant}/v2.0
// for v2.0 tokens, {base}/{tenant}/ for v1.0 ones.
func (p *Provider) Issuer(base string) string {
	if p.cfg.TokenVersion == TokenV1 {
		return base + "/" + p.cfg.Tenant + "/"
	}
	return v2Issuer(base, p.cfg.Tenant)
}

// v2Issuer is Entra's v2.0 issuer of tenant at base, which the v2.0
// discovery document names.
func v2Issuer(base, tenant string) string { return base + "/" + tenant + "/v2.0" }
