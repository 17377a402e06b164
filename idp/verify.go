package idp

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"strings"

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
		// A cached token's client may have been deleted since.
		if err := p.checkIssuedTo(cached); err != nil {
			return tokenEntry{}, err
		}
		return cached, nil
	}
	if err := checkEncoding(raw); err != nil {
		return tokenEntry{}, err
	}
	if err := p.checkHeader(raw); err != nil {
		return tokenEntry{}, err
	}
	if !p.signatureVerifies(raw) {
		return tokenEntry{}, refuse(ReasonSignature, "the signature does not verify with the sandbox key")
	}
	// Decoded only now: a forged payload is never read.
	payload, err := base64.RawURLEncoding.DecodeString(raw[strings.IndexByte(raw, '.')+1 : strings.LastIndexByte(raw, '.')])
	if err != nil {
		return tokenEntry{}, refuse(ReasonMalformed, "not base64url without padding")
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
	if err := p.checkIssuedTo(entry); err != nil {
		return tokenEntry{}, err
	}
	if len(raw) <= maxCachedTokenBytes {
		p.cache.put(raw, entry)
	}
	return entry, nil
}

// checkEncoding refuses anything but three base64url segments without
// padding, in their one canonical spelling: jwx also accepts padding and
// the standard alphabet, which would give one token several spellings (and
// several journal, cache and rule identities). It allocates nothing: a
// forged token must be cheap to refuse.
func checkEncoding(raw string) *ValidationError {
	segments := 0
	for seg := range strings.SplitSeq(raw, ".") {
		segments++
		if segments > 3 || !canonicalBase64URL(seg) {
			return refuse(ReasonMalformed, "not a signed JWT in compact form, base64url without padding")
		}
	}
	if segments != 3 {
		return refuse(ReasonMalformed, "not a signed JWT in compact form, base64url without padding")
	}
	return nil
}

// signatureVerifies checks the RS256 signature of a compact JWS (checkHeader
// has checked alg and kid) over its signing input as sent, without decoding
// the payload first: refusing a forged token costs one hash and one RSA
// verification, whatever its size.
func (p *Provider) signatureVerifies(raw string) bool {
	dot := strings.LastIndexByte(raw, '.')
	sig, err := base64.RawURLEncoding.DecodeString(raw[dot+1:])
	if err != nil {
		return false
	}
	h := sha256.New()
	_, _ = io.WriteString(h, raw[:dot]) // a hash never fails to write
	return rsa.VerifyPKCS1v15(&p.cfg.Keys.signing.PublicKey, crypto.SHA256, h.Sum(nil), sig) == nil
}

// canonicalBase64URL reports whether s is unpadded base64url whose unused
// trailing bits are zero, the only spelling RawURLEncoding.Strict accepts.
func canonicalBase64URL(s string) bool {
	if len(s)%4 == 1 {
		return false
	}
	var last int8 = -1
	for i := 0; i < len(s); i++ {
		last = base64URLValues[s[i]]
		if last < 0 {
			return false
		}
	}
	switch len(s) % 4 {
	case 2: // one byte: the last character carries 2 bits, 4 unused
		return last&0x0f == 0
	case 3: // two bytes: 4 bits, 2 unused
		return last&0x03 == 0
	}
	return true
}

// base64URLValues maps a byte to its 6-bit base64url value, -1 for any
// other byte. Built once and only read.
var base64URLValues = func() (t [256]int8) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range t {
		t[i] = -1
	}
	for i := range len(alphabet) {
		t[alphabet[i]] = int8(i)
	}
	return t
}()

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

// clip cuts a header value for an error detail: it comes from the caller.
func clip(s string) string {
	const limit = 40
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
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

// checkIssuedTo refuses a token that was not issued to a client that
// exists now: a token of another environment (signed with the same key),
// of a runtime client that was deleted or ran out of time, or of an
// earlier client of the same id, created again since. A token without the
// sandbox's own claims (signed by hand with the development key) may name
// a fixture client only.
func (p *Provider) checkIssuedTo(e tokenEntry) *ValidationError {
	id := e.principal.ClientID
	c, ok := p.clients.get(id)
	if !ok {
		return p.checkClientExists(id)
	}
	if e.environment != "" && e.environment != p.cfg.Environment {
		return refuse(ReasonUnknownClient, "the token was issued to client '%s' of the %s environment; this sandbox runs as %s", clip(id), clip(e.environment), p.cfg.Environment)
	}
	if want := instanceOf(c); e.instance != want && (c.Runtime || e.instance != "") {
		return refuse(ReasonClientDeleted, "client '%s' was deleted (or its ttl ran out) and created again since this token was issued; get a new token", clip(id))
	}
	return nil
}

// checkClientExists refuses a token whose client does not exist now: a
// token signed with the same key for another environment names no client
// of this sandbox, and a runtime client may have been deleted or run out
// of time, which the refusal says.
func (p *Provider) checkClientExists(id string) *ValidationError {
	if _, ok := p.clients.get(id); ok {
		return nil
	}
	if p.clients.wasDeleted(id) {
		return refuse(ReasonClientDeleted, "client '%s' was deleted or its ttl ran out; create a new client and get a new token", clip(id))
	}
	return refuse(ReasonUnknownClient, "client '%s' does not exist in the %s environment", clip(id), p.cfg.Environment)
}
