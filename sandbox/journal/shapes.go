package journal

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

// authSchemeCredential matches an HTTP authentication scheme followed by a
// credential anywhere in a value, such as "X-Auth: Bearer abc...".
var authSchemeCredential = regexp.MustCompile(`(?i)\b(bearer|basic|digest|negotiate|ntlm)\s+[A-Za-z0-9._~+/=-]{6,}`)

// FindJWT returns the first JWT-shaped substring of v, or "".
func FindJWT(v string) string {
	if !strings.Contains(v, "ey") || !strings.Contains(v, ".") {
		return "" // most values: no regexp work
	}
	return jwtShape.FindString(v)
}

// decodeBase64 decodes v when it is plausibly base64 (either alphabet,
// padded or not) of a useful length, so a secret sent base64-encoded (as in
// HTTP Basic without the scheme) is found too.
func decodeBase64(v string) (string, bool) {
	if len(v) < 8 || len(v) > 4096 {
		return "", false
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil {
			return string(b), true
		}
	}
	return "", false
}
