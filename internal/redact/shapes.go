package redact

import (
	"encoding/base64"
	"regexp"
	"strings"
)

// jwtShape matches a JWT (or JWE) in any base64 spelling: a JSON header,
// which always encodes to "ey", then two more dot-separated segments.
// Padding and the standard alphabet are included: a re-spelled token still
// carries the same signature.
var jwtShape = regexp.MustCompile(`ey[A-Za-z0-9_\-+/=]{8,}\.[A-Za-z0-9_\-+/=]{4,}\.[A-Za-z0-9_\-+/=]*`)

// entraSecretShape matches a client secret as Entra mints them: three
// characters, a version digit, "Q~", then at least 30 more. The sandbox
// mints runtime clients' secrets this way (idp.NewClientSecret) and keeps
// only their digests, so the shape is how the journal knows them.
var entraSecretShape = regexp.MustCompile(`[A-Za-z0-9_.~-]{3}[0-9]Q~[A-Za-z0-9_.~-]{30,}`)

// authSchemes are HTTP authentication schemes whose credential follows
// them, as in "X-Auth: Bearer abc...".
var authSchemes = []string{"bearer", "basic", "digest", "negotiate", "ntlm"}

// hasSchemeCredential reports whether v holds, anywhere, an authentication
// scheme (any case, at a word start) then white space and a credential of
// at least 6 token68 characters. A scan, not a regexp: it runs on every
// journaled header value.
func hasSchemeCredential(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i] | 0x20; c != 'b' && c != 'd' && c != 'n' || i > 0 && isWordByte(v[i-1]) {
			continue
		}
		for _, scheme := range authSchemes {
			if len(v)-i <= len(scheme) || !strings.EqualFold(v[i:i+len(scheme)], scheme) {
				continue
			}
			j := i + len(scheme)
			k := j
			for k < len(v) && (v[k] == ' ' || v[k] == '\t') {
				k++
			}
			n := 0
			for k+n < len(v) && isToken68Byte(v[k+n]) {
				n++
			}
			if k > j && n >= 6 {
				return true
			}
		}
	}
	return false
}

// isWordByte is a letter, digit or underscore.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// isToken68Byte is a character of an RFC 9110 token68 credential.
func isToken68Byte(c byte) bool {
	return isWordByte(c) || strings.IndexByte("-._~+/=", c) >= 0
}

// FindJWT returns the first JWT-shaped substring of v, or "".
func FindJWT(v string) string {
	if !strings.Contains(v, "ey") || !strings.Contains(v, ".") {
		return "" // most values: no regexp work
	}
	return jwtShape.FindString(v)
}

// decodeBase64 decodes v when it is plausibly base64 of a useful length,
// in the one encoding its characters suggest (URL alphabet if it holds - or
// _, padded if it ends in =), so a secret sent base64-encoded (as in HTTP
// Basic without the scheme) is found too. Text that cannot decode to
// minLen bytes is not decoded: most header names and path segments are
// base64-shaped, and each decoding is an allocation.
func decodeBase64(v string, minLen int) (string, bool) {
	if len(v) < 8 || len(v) > 4096 {
		return "", false
	}
	url := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '-' || c == '_':
			url = true
		case c == '+' || c == '/' || c == '=' || isWordByte(c) && c != '_':
		default:
			return "", false
		}
	}
	padded := strings.HasSuffix(v, "=")
	enc := base64.RawStdEncoding
	switch {
	case url && padded:
		enc = base64.URLEncoding
	case url:
		enc = base64.RawURLEncoding
	case padded:
		enc = base64.StdEncoding
	}
	if enc.DecodedLen(len(v)) < minLen {
		return "", false
	}
	b, err := enc.DecodeString(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}
