// Package idp is the sandbox's mock identity provider, shaped like Microsoft
// Entra ID v2.0: the client-credentials token endpoint with Entra's error
// bodies, RS256 access tokens with Entra's app-only claims, the signing keys
// as a JWKS, OpenID discovery, MSAL's instance discovery, and the token
// validation the referrals API uses.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package idp
