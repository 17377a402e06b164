package idp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"

	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// maxCachedTokenBytes is the longest token the validation cache keeps. The
// sandbox's own tokens are about 1 KB; anyone holding the signing key (the
// built-in development key is public) could sign 60 KB ones, and the cache
// must not turn those into hundreds of megabytes.
const maxCachedTokenBytes = 4 << 10

// maxNumericDate is the last second of year 9999: a NumericDate beyond it
// (or before the epoch) is not a time any issuer meant.
const maxNumericDate = 253402300799

// verify checks everything about a token that does not depend on time or
// on the API asking: its form (compact, base64url without padding, RS256, a
// sandbox kid, no crit header), its signature, its claims' types, and that
// its azp is a client of this environment. Only tokens that pass are cached,
// so the cache never holds a forger's claims.
func (p *Provider) verify(raw string) (tokenEntry, *ValidationError) {
	if cached, ok := p.cache.get(raw); ok {
		return cached, nil
	}
	if err := checkEncoding(raw); err != nil {
		return tokenEntry{}, err
	}
	if err := p.checkHeader(raw); err != nil {
		return tokenEntry{}, err
	}
	payload, err := jws.Verify([]byte(raw), jws.WithKeySet(p.cfg.Keys.PublicSet(), jws.WithRequireKid(true)))
	if err != nil {
		return tokenEntry{}, refuse(ReasonSignature, "the signature does not verify with the sandbox key")
	}
	if err := checkTimeClaims(payload); err != nil {
		return tokenEntry{}, err
	}
	tok, err := jwt.Parse(payload, jwt.WithVerify(false), jwt.WithValidate(false))
	if err != nil {
		return tokenEntry{}, refuse(ReasonMalformed, "the claims are not a valid JWT claims set")
	}
	entry, verr := entryOf(tok)
	if verr != nil {
		return tokenEntry{}, verr
	}
	if _, ok := p.clients[entry.principal.ClientID]; !ok {
		// A token signed with the same key for another environment (or a
		// client since removed) names no client of this sandbox.
		return tokenEntry{}, refuse(ReasonUnknownClient, "client '%s' does not exist in the %s environment", entry.principal.ClientID, p.cfg.Environment)
	}
	if len(raw) <= maxCachedTokenBytes {
		p.cache.put(raw, entry)
	}
	return entry, nil
}

// checkEncoding refuses anything but three base64url segments without
// padding, in their one canonical spelling: jwx also accepts padding and
// the standard alphabet, which would give one token several spellings (and
// several journal, cache and rule identities).
func checkEncoding(raw string) *ValidationError {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return refuse(ReasonMalformed, "not a signed JWT in compact form")
	}
	for _, part := range parts {
		if _, err := base64.RawURLEncoding.Strict().DecodeString(part); err != nil {
			return refuse(ReasonMalformed, "not base64url without padding")
		}
	}
	return nil
}

// checkCritical refuses a crit header (RFC 7515 4.1.11): it lists header
// parameters the recipient must understand, and the sandbox understands no
// extension, so any crit, even an empty one, makes the token unusable.
func checkCritical(rawHeader string) *ValidationError {
	decoded, err := base64.RawURLEncoding.DecodeString(rawHeader)
	if err != nil {
		return refuse(ReasonMalformed, "not base64url without padding")
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(decoded, &header); err != nil {
		return refuse(ReasonMalformed, "the header is not a JSON object")
	}
	if crit, ok := header["crit"]; ok {
		return refuse(ReasonCritical, "crit %s names extensions the sandbox does not understand", shortJSON(crit))
	}
	return nil
}

// checkTimeClaims requires exp, nbf and iat, when present, to be JSON
// numbers within years 1970 to 9999. jwx would fail on an out-of-range
// number with a parse error that reads like a bad signature, and would
// accept an RFC 3339 string where RFC 7519 requires a NumericDate.
func checkTimeClaims(payload []byte) *ValidationError {
	var claims map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&claims); err != nil {
		return refuse(ReasonMalformed, "the claims are not a JSON object")
	}
	for _, name := range []string{"exp", "nbf", "iat"} {
		v, ok := claims[name]
		if !ok {
			continue
		}
		var n json.Number
		if err := json.Unmarshal(v, &n); err != nil {
			return refuse(ReasonMalformed, "%s %s is not a NumericDate (seconds since 1970)", name, shortJSON(v))
		}
		f, err := n.Float64()
		if err == nil && f >= 0 && f <= maxNumericDate && !math.IsNaN(f) {
			continue
		}
		if name == "exp" {
			// A date no clock reaches cannot be honoured as a validity
			// period: the token is refused as expired, its signature being fine.
			return refuse(ReasonExpired, "exp %s is not a time between 1970 and 9999", shortJSON(v))
		}
		return refuse(ReasonMalformed, "%s %s is not a time between 1970 and 9999", name, shortJSON(v))
	}
	return nil
}

// shortJSON quotes a claim or header value for an error detail, cut short:
// it comes from the caller and may be long.
func shortJSON(v json.RawMessage) string {
	const limit = 40
	s := string(v)
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return s
}
