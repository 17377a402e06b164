// Package request is how every flow of the sandbox reads a request: its
// bearer token, its path variables as the client meant them, its query
// string strictly, its page of a listing, and the context its writes to
// the store run in. The partner API and the admin API read alike because
// they read through this package.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package request

import (
	"net/url"
	"strings"
)

// StrictQuery parses a raw query string for the API, refusing what
// url.ParseQuery would silently drop or merge: a key or value that is not
// valid percent-encoding ("cursor=%%%") and a parameter given twice (which
// value would win is a guess). Errors are 400s naming the parameter.
func StrictQuery(raw string) (map[string]string, error) {
	params := map[string]string{}
	if raw == "" {
		return params, nil
	}
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue // "a=1&&b=2": nothing there to misread
		}
		rawKey, rawValue, _ := strings.Cut(part, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil || strings.Contains(rawKey, ";") {
			return nil, BadQuery(Printable(rawKey), "is not a well-formed query parameter name (percent-encode reserved characters)")
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil || strings.Contains(rawValue, ";") {
			// The value is not quoted back: it may be a secret put in
			// the URL by mistake.
			return nil, BadQuery(key, "is not a well-formed query value (percent-encode reserved characters)")
		}
		if _, dup := params[key]; dup {
			return nil, BadQuery(key, "is given more than once; give it once")
		}
		params[key] = value
	}
	return params, nil
}

// Printable bounds and quotes raw client text for an error message.
func Printable(s string) string {
	const maxShown = 64
	if len(s) > maxShown {
		s = s[:maxShown] + "..."
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
