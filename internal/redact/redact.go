// Package redact hides credentials in what the sandbox keeps or writes
// about a request: the journal's entries and the log lines of the token
// endpoint and the admin guard use the same rules, so neither can carry a
// secret the other would hide.
package redact

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
)

// Redacted replaces every credential the journal or a log might otherwise
// hold.
const Redacted = "[redacted]"

// credentialNames are header and query parameter names whose value is a
// credential whatever it looks like, compared case-insensitively: the ones
// clients and gateways commonly use (Azure API Management, Azure Functions,
// SAS signatures, OAuth codes and tokens).
var credentialNames = map[string]bool{
	"authorization": true, "proxy-authorization": true, "cookie": true, "set-cookie": true,
	"ocp-apim-subscription-key": true, "subscription-key": true, "x-functions-key": true,
	"x-api-key": true, "key": true, "code": true, "sig": true, "auth": true, "x-auth": true,
	"pwd": true, "pass": true,
}

// credentialWords make any name that contains one a credential name.
var credentialWords = []string{
	"secret", "token", "password", "passwd", "api-key", "apikey", "api_key", "assertion",
	"signature", "credential", "subscription-key", "functions-key", "access-key", "access_key",
	"private-key",
}

// IsCredentialName reports whether a header or query parameter name carries
// a credential by its name alone: one of credentialNames, or a name holding
// one of credentialWords. The conformance report uses the same list.
func IsCredentialName(name string) bool {
	// Lower-case into a stack buffer: the journal asks this of every
	// header of every request, and strings.ToLower allocates for each
	// canonical (capitalised) header name.
	// Non-ASCII names take strings.ToLower, whose Unicode folding (the
	// Kelvin sign becomes "k") the lists are matched against.
	var buf [64]byte
	n := buf[:0]
	if len(name) > len(buf) {
		n = make([]byte, 0, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 0x80 {
			n = append(n[:0], strings.ToLower(name)...)
			break
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		n = append(n, c)
	}
	if credentialNames[string(n)] {
		return true
	}
	for _, w := range credentialWords {
		if bytes.Contains(n, []byte(w)) {
			return true
		}
	}
	return false
}

// Redactor hides credentials in what the journal stores and the logs
// write: by name (see
// IsCredentialName) and by value, wherever the value appears (any header,
// query parameter name or value, or path segment). A value is a credential
// when it holds something shaped like a JWT (every token the sandbox issues
// is one), a "Bearer <credential>" or "Basic <credential>", an Entra-shaped
// client secret (runtime clients' secrets are minted so), or a client
// secret the sandbox knows, also once percent- or base64-decoded. Safe for
// concurrent use; it never changes after New.
type Redactor struct {
	secrets []string
	// shortest is the fewest bytes a value can hold a credential in (see
	// minCredentialShape): base64 that decodes to fewer is not decoded.
	shortest int
}

// minSecretLength is the shortest secret searched for inside longer
// values; a shorter one is redacted only where it is the whole value, so
// that a tiny test secret does not blank out every header.
const minSecretLength = 6

// minCredentialShape is the length of the shortest credential found by
// its shape alone: a scheme and its credential, "ntlm" and a space and 6
// characters (a JWT takes at least 16, an Entra-shaped secret 36).
const minCredentialShape = len("ntlm ") + 6

// New returns a Redactor that also hides the given client secrets.
func New(secrets []string) *Redactor {
	x := &Redactor{shortest: minCredentialShape}
	for _, s := range secrets {
		if s != "" {
			x.secrets = append(x.secrets, s)
			x.shortest = min(x.shortest, len(s))
		}
	}
	return x
}

// Headers flattens request headers, hiding every credential.
func (x *Redactor) Headers(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for name, values := range h {
		value := strings.Join(values, ", ")
		switch {
		case x.holdsCredential(name):
			out[Redacted] = Redacted
		case IsCredentialName(name) || x.holdsCredential(value):
			out[name] = Redacted
		default:
			out[name] = value
		}
	}
	return out
}

// Query keeps parameter names (so a credential sent in a URL shows up in
// the journal and the conformance report) but never a credential value.
// What it returns is in url.Values' encoding: parameters sorted by name.
func (x *Redactor) Query(raw string) string {
	if raw == "" {
		return ""
	}
	if x.plainQuery(raw) {
		return raw
	}
	return x.query(raw)
}

// plainQuery reports whether raw is already what query returns for it:
// parameters of name=value each, in increasing order of name, of
// characters that url.QueryEscape keeps as they are, none a credential.
// Parsing and encoding such a query (?limit=50 is one) gives it back
// unchanged, and was a third of what the journal spent on a listing.
func (x *Redactor) plainQuery(raw string) bool {
	// The form first, which is cheap, then the credentials.
	prev, first := "", true
	for pair := range strings.SplitSeq(raw, "&") {
		name, value, ok := strings.Cut(pair, "=")
		if !ok || !unreserved(name) || !unreserved(value) || !first && name <= prev {
			return false
		}
		prev, first = name, false
	}
	for pair := range strings.SplitSeq(raw, "&") {
		name, value, _ := strings.Cut(pair, "=")
		if x.holdsCredential(name) || IsCredentialName(name) || x.holdsCredential(value) {
			return false
		}
	}
	return true
}

// unreserved reports whether s holds only letters, digits, and the marks
// -_.~, which url.QueryEscape and QueryUnescape leave as they are.
func unreserved(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
		default:
			return false
		}
	}
	return true
}

// query is Query for any query: parsed, each credential redacted, encoded.
func (x *Redactor) query(raw string) string {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return Redacted
	}
	out := make(url.Values, len(q))
	for name, values := range q {
		if x.holdsCredential(name) {
			// "?<token>" parses as a name with an empty value.
			out[Redacted] = []string{Redacted}
			continue
		}
		kept := make([]string, len(values))
		for i, v := range values {
			kept[i] = v
			if IsCredentialName(name) || x.holdsCredential(v) {
				kept[i] = Redacted
			}
		}
		out[name] = kept
	}
	return out.Encode()
}

// Path replaces each path segment that holds a credential.
func (x *Redactor) Path(p string) string {
	// Most paths hold no credential: look before splitting.
	clean := true
	for seg := range strings.SplitSeq(p, "/") {
		if x.holdsCredential(seg) {
			clean = false
			break
		}
	}
	if clean {
		return p
	}
	segments := strings.Split(p, "/")
	for i, seg := range segments {
		if x.holdsCredential(seg) {
			segments[i] = Redacted
		}
	}
	return strings.Join(segments, "/")
}

// Value returns v, or Redacted when v holds a credential (a client id
// field into which a secret was pasted, say).
func (x *Redactor) Value(v string) string {
	if x.holdsCredential(v) {
		return Redacted
	}
	return v
}

// holdsCredential reports whether v holds a credential by its shape or is
// (or contains) a known secret, as is or once decoded.
func (x *Redactor) holdsCredential(v string) bool {
	if v == "" {
		return false
	}
	if x.plainCredential(v) {
		return true
	}
	if strings.Contains(v, "%") {
		if dec, err := url.QueryUnescape(v); err == nil && x.plainCredential(dec) {
			return true
		}
	}
	if dec, ok := decodeBase64(v, x.shortest); ok && x.plainCredential(dec) {
		return true
	}
	return false
}

// plainCredential is holdsCredential without decoding.
func (x *Redactor) plainCredential(v string) bool {
	if FindJWT(v) != "" || hasSchemeCredential(v) || strings.Contains(v, "Q~") && entraSecretShape.MatchString(v) {
		return true
	}
	for _, s := range x.secrets {
		if v == s || len(s) >= minSecretLength && strings.Contains(v, s) {
			return true
		}
	}
	return false
}
