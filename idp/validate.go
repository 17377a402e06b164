package idp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

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
	ReasonClientDeleted Reason = "client deleted"
	ReasonCritical      Reason = "unsupported critical header"
	ReasonUnknownClient Reason = "unknown client"
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
	// Audience is the API's App ID URI, the aud of v1.0 tokens.
	Audience string
	// ApplicationID is the API's application id, the aud of v2.0 tokens
	// (ApplicationID(Audience)); either is accepted, whichever format the
	// sandbox issues, as an API registered in Entra accepts both.
	ApplicationID string
	// Issuers are the accepted iss values; the API passes the issuer for the
	// address the request came in on.
	Issuers []string
	// AcceptIssuer, when set, accepts further issuers (the API passes
	// Provider.OwnIssuer: any name the sandbox serves).
	AcceptIssuer func(iss string) bool
}

// Validate checks a bearer token: compact and base64url without padding,
// RS256 only, signed by the sandbox key named by kid, no crit header, azp a
// client that exists now (a runtime client may be deleted or run out of
// time), exp and nbf against the client's clock (with Config.ClockSkew and
// the clock-back rule of timing), iss and aud. Errors are *ValidationError.
func (p *Provider) Validate(raw string, want Expectation) (Principal, error) {
	if raw == "" {
		return Principal{}, refuse(ReasonMissing, "no bearer token in the Authorization header")
	}
	entry, verr := p.verify(raw)
	if verr != nil {
		return Principal{}, verr
	}
	if err := checkClaims(entry, want, p.timing(entry.principal.ClientID)); err != nil {
		return Principal{}, err
	}
	return entry.principal, nil
}

// checkHeader refuses anything but an RS256 header with a kid the sandbox
// owns and no crit, before any signature work: never alg none, never HMAC.
// checkEncoding has already made raw three base64url segments, so it is the
// compact form: the JSON serialization would let claims outside the signed
// payload be read as if signed. Only the header is decoded here, so a forged
// token costs no more than its header before its signature is checked.
func (p *Provider) checkHeader(raw string) *ValidationError {
	decoded, err := base64.RawURLEncoding.DecodeString(raw[:strings.IndexByte(raw, '.')])
	if err != nil {
		return refuse(ReasonMalformed, "not base64url without padding")
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(decoded, &header); err != nil {
		return refuse(ReasonMalformed, "the header is not a JSON object")
	}
	if crit, ok := header["crit"]; ok {
		// RFC 7515 4.1.11: crit lists extensions the recipient must
		// understand, and the sandbox understands none, so any crit, even
		// an empty one, makes the token unusable.
		return refuse(ReasonCritical, "crit %s names extensions the sandbox does not understand", shortJSON(crit))
	}
	var alg, kid string
	if err := json.Unmarshal(header["alg"], &alg); err != nil {
		return refuse(ReasonMalformed, "no alg string in the token header")
	}
	if alg != jwa.RS256.String() {
		return refuse(ReasonAlgorithm, "alg '%s'; only RS256 is accepted", clip(alg))
	}
	if v, ok := header["kid"]; ok && json.Unmarshal(v, &kid) != nil {
		return refuse(ReasonMalformed, "kid %s is not a string", shortJSON(v))
	}
	if kid == "" {
		return refuse(ReasonUnknownKey, "no kid in the token header")
	}
	if kid != p.cfg.Keys.KeyID() {
		return refuse(ReasonUnknownKey, "kid '%s' is not a sandbox signing key", clip(kid))
	}
	return nil
}

// tokenEntry is what validation needs of a verified token; it is cached.
type tokenEntry struct {
	principal Principal
	issuer    string
	audience  []string
	notBefore time.Time
	// environment and instance are the sandbox's own claims ("" when
	// absent): whom the token was issued to (see claimInstance).
	environment, instance string
}

func entryOf(tok jwt.Token) (tokenEntry, *ValidationError) {
	// The client is azp in a v2.0 token, appid in a v1.0 one.
	azp, _ := tok.Get("azp")
	clientID, _ := azp.(string)
	if clientID == "" {
		appid, _ := tok.Get("appid")
		clientID, _ = appid.(string)
	}
	if clientID == "" {
		return tokenEntry{}, refuse(ReasonMalformed, "no azp (or appid) claim")
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
	env, _ := tok.Get(claimEnvironment)
	instance, _ := tok.Get(claimInstance)
	e := tokenEntry{
		principal: Principal{ClientID: clientID, Roles: roles, TokenID: tokenID, ExpiresAt: tok.Expiration()},
		issuer:    tok.Issuer(),
		audience:  tok.Audience(),
		notBefore: tok.NotBefore(),
	}
	e.environment, _ = env.(string)
	e.instance, _ = instance.(string)
	return e, nil
}

// checkClaims runs the checks that depend on time or on the caller, so a
// cached token is re-checked on every use.
func checkClaims(e tokenEntry, want Expectation, now timing) *ValidationError {
	if err := now.check(e.principal.ExpiresAt, e.notBefore); err != nil {
		return err
	}
	if !slices.Contains(want.Issuers, e.issuer) && (want.AcceptIssuer == nil || !want.AcceptIssuer(e.issuer)) {
		return refuse(ReasonWrongIssuer, "issuer '%s' is not this sandbox", e.issuer)
	}
	if !slices.Contains(e.audience, want.Audience) && (want.ApplicationID == "" || !slices.Contains(e.audience, want.ApplicationID)) {
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
