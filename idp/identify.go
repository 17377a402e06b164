package idp

import (
	"time"
)

// Claimed is the client a token the sandbox really issued belongs to: its
// signature verified with the sandbox's own keys and its azp is a client of
// this environment. Time, audience and issuer are not checked, because the
// request journal, rate limits and client-bound failure rules need the
// client behind an expired token too (the conformance report judges a
// client's calls with expired tokens). Any other token, forged or
// unreadable, is the zero Claimed: its claims are never believed.
type Claimed struct {
	ClientID  string
	TokenID   string
	ExpiresAt time.Time
}

// Identify returns who a genuine token belongs to, or the zero Claimed and
// the *ValidationError Validate would give the token: a caller that keeps
// it need not verify a forged token twice. It never grants access;
// Validate does that.
func (p *Provider) Identify(raw string) (Claimed, error) {
	if raw == "" {
		return Claimed{}, refuse(ReasonMissing, "no bearer token in the Authorization header")
	}
	entry, err := p.verify(raw)
	if err != nil {
		return Claimed{}, err
	}
	return Claimed{ClientID: entry.principal.ClientID, TokenID: entry.principal.TokenID, ExpiresAt: entry.principal.ExpiresAt}, nil
}
