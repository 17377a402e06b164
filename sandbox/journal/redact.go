package journal

import (
	"net/http"
	"net/url"
	"strings"
)

// Redacted replaces every credential the journal might otherwise hold.
const Redacted = "[redacted]"

// sensitive reports whether a header or query parameter name can carry a
// credential.
func sensitive(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	for _, part := range []string{"secret", "token", "password", "passwd", "api-key", "apikey", "api_key", "assertion", "signature", "credential"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// RedactHeaders flattens request headers, hiding every credential.
func RedactHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for name, values := range h {
		if sensitive(name) {
			out[name] = Redacted
			continue
		}
		out[name] = strings.Join(values, ", ")
	}
	return out
}

// RedactQuery keeps parameter names (so a credential sent in a URL shows up
// in the journal and the conformance report) but never their values.
func RedactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return Redacted
	}
	for name := range q {
		if sensitive(name) {
			q[name] = []string{Redacted}
		}
	}
	return q.Encode()
}
