package idp

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// ClockSkew is the leeway allowed on exp and nbf, as resource servers allow
// for clocks that differ slightly.
const ClockSkew = 30 * time.Second

// Reason says why a token was refused; it is shown to the client in the
// WWW-Authenticate error_description.
type Reason string

// The reasons a token is refused.
const (
	ReasonMissing       Reason = "missing"
	ReasonMalformed     Reason = "malformed"
	ReasonAlgorithm     Reason = "unsupported algorithm"
	ReasonUnknownKey    Reason = "unknown signing key"
	ReasonSignature     Reason = "bad signature"
	ReasonExpired       Reason = "expired"
	ReasonNotYetValid   Reason = "not yet valid"
	ReasonWrongIssuer   Reason = "wrong issuer"
	ReasonWrongAudience Reason = "wrong audience"
)

// ValidationError is a refused token, with the reason and the detail.
type ValidationError struct {
	Reason Reason
	Detail string
}

// Error implements error.
func (e *ValidationError) Error() string {
	if e.Detail == "" {
		return "access token " + string(e.Reason)
	}
	return "access token " + string(e.Reason) + ": " + e.Detail
}

func refuse(reason Reason, format string, args ...any) *ValidationError {
	return &ValidationError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// Principal is the caller a valid token identifies.
type Principal struct {
	ClientID  string
	Roles     []string
	TokenID   string
	ExpiresAt time.Time
}

// HasRole reports whether the principal holds role.
func (p Principal) HasRole(role string) bool { return slices.Contains(p.Roles, role) }

// Expectation is what a token must say to be accepted by one API.
type Expectation struct {
	// Audience is the API's resource (aud claim).
	Audience string
	// Issuers are the accepted iss values; the API passes the issuer for the
	// address the request came in on.
	Issuers []string
	// AcceptIssuer, when set, accepts further issuers (the API passes
	// Provider.OwnIssuer: any name the sandbox serves).
	AcceptIssuer func(iss string) bool
}

// Validate checks a bearer token: RS256 only, signed by the sandbox key named
// by kid, exp and nbf against the sandbox clock with ClockSkew, iss and aud.
// Errors are *ValidationError.
func (p *Provider) Validate(raw string, want Expectation) (Principal, error) {
	if raw == "" {
		return Principal{}, refuse(ReasonMissing, "no bearer token in the Authorization header")
	}
	now := p.cfg.Clock.Now()
	if cached, ok := p.cache.get(raw); ok {
		if err := checkClaims(cached, want, now); err != nil {
			return Principal{}, err
		}
		return cached.principal, nil
	}
	if err := p.checkHeader(raw); err != nil {
		return Principal{}, err
	}
	tok, err := jwt.ParseString(raw,
		jwt.WithKeySet(p.cfg.Keys.PublicSet()),
		jwt.WithValidate(false), // time and claims are checked below, with typed reasons
	)
	if err != nil {
		return Principal{}, refuse(ReasonSignature, "the signature does not verify with the sandbox key")
	}
	entry, verr := entryOf(tok)
	if verr != nil {
		return Principal{}, verr
	}
	if err := checkClaims(entry, want, now); err != nil {
		return Principal{}, err
	}
	p.cache.put(raw, entry)
	return entry.principal, nil
}

// checkHeader refuses anything but a compact RS256 JWS with a kid the
// sandbox owns, before any signature work: never alg none, never HMAC.
func (p *Provider) checkHeader(raw string) *ValidationError {
	// Compact only: the JSON serialization would let claims outside the
	// signed payload be read as if signed.
	msg, err := jws.Parse([]byte(raw), jws.WithCompact())
	if err != nil || len(msg.Signatures()) != 1 {
		return refuse(ReasonMalformed, "not a signed JWT in compact form")
	}
	h := msg.Signatures()[0].ProtectedHeaders()
	if h.Algorithm() != jwa.RS256 {
		return refuse(ReasonAlgorithm, "alg '%s'; only RS256 is accepted", h.Algorithm())
	}
	if h.KeyID() == "" {
		return refuse(ReasonUnknownKey, "no kid in the token header")
	}
	if _, ok := p.cfg.Keys.PublicSet().LookupKeyID(h.KeyID()); !ok {
		return refuse(ReasonUnknownKey, "kid '%s' is not a sandbox signing key", h.KeyID())
	}
	return nil
}

// tokenEntry is what validation needs of a verified token; it is cached.
type tokenEntry struct {
	principal Principal
	issuer    string
	audience  []string
	notBefore time.Time
}

func entryOf(tok jwt.Token) (tokenEntry, *ValidationError) {
	azp, _ := tok.Get("azp")
	clientID, _ := azp.(string)
	if clientID == "" {
		return tokenEntry{}, refuse(ReasonMalformed, "no azp claim")
	}
	if tok.Expiration().IsZero() {
		return tokenEntry{}, refuse(ReasonMalformed, "no exp claim")
	}
	var roles []string
	if v, ok := tok.Get("roles"); ok {
		list, _ := v.([]any)
		for _, r := range list {
			if s, ok := r.(string); ok {
				roles = append(roles, s)
			}
		}
	}
	uti, _ := tok.Get("uti")
	tokenID, _ := uti.(string)
	return tokenEntry{
		principal: Principal{ClientID: clientID, Roles: roles, TokenID: tokenID, ExpiresAt: tok.Expiration()},
		issuer:    tok.Issuer(),
		audience:  tok.Audience(),
		notBefore: tok.NotBefore(),
	}, nil
}

// checkClaims runs the checks that depend on time or on the caller, so a
// cached token is re-checked on every use.
func checkClaims(e tokenEntry, want Expectation, now time.Time) *ValidationError {
	if now.After(e.principal.ExpiresAt.Add(ClockSkew)) {
		return refuse(ReasonExpired, "expired at %s", e.principal.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if !e.notBefore.IsZero() && now.Add(ClockSkew).Before(e.notBefore) {
		return refuse(ReasonNotYetValid, "not valid before %s", e.notBefore.UTC().Format(time.RFC3339))
	}
	if !slices.Contains(want.Issuers, e.issuer) && (want.AcceptIssuer == nil || !want.AcceptIssuer(e.issuer)) {
		return refuse(ReasonWrongIssuer, "issuer '%s' is not this sandbox", e.issuer)
	}
	if !slices.Contains(e.audience, want.Audience) {
		return refuse(ReasonWrongAudience, "the token is for '%s', not '%s'", strings.Join(e.audience, " "), want.Audience)
	}
	return nil
}

// IsValidationError reports whether err is a refused token, and which.
func IsValidationError(err error) (*ValidationError, bool) {
	var v *ValidationError
	ok := errors.As(err, &v)
	return v, ok
}
