package idp

import (
	"time"

	"github.com/lestrrat-go/jwx/v2/jwt"
)

// Claimed is who a bearer token says it belongs to, whether or not it is
// valid: the request journal and client-bound failure rules need the client
// behind an expired or forged token too (the conformance report judges a
// client's calls with expired tokens).
type Claimed struct {
	ClientID  string
	TokenID   string
	ExpiresAt time.Time
}

// Identify reads a token's claims without trusting them. It never grants
// access; Validate does that.
func (p *Provider) Identify(raw string) Claimed {
	if raw == "" {
		return Claimed{}
	}
	if e, ok := p.cache.get(raw); ok {
		return Claimed{ClientID: e.principal.ClientID, TokenID: e.principal.TokenID, ExpiresAt: e.principal.ExpiresAt}
	}
	tok, err := jwt.ParseInsecure([]byte(raw))
	if err != nil {
		return Claimed{}
	}
	entry, verr := entryOf(tok)
	if verr != nil {
		return Claimed{}
	}
	return Claimed{ClientID: entry.principal.ClientID, TokenID: entry.principal.TokenID, ExpiresAt: entry.principal.ExpiresAt}
}
