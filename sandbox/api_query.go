package sandbox

import (
	"net/url"
	"strings"
)

// strictQuery parses a raw query string for the API, refusing what
// url.ParseQuery would silently drop or merge: a key or value that is not
// valid percent-encoding ("cursor=%%%") and a parameter given twice (which
// value would win is a guess). Errors are 400s naming the parameter.
func strictQuery(raw string) (map[string]string, error) {
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
			return nil, badQuery(printable(rawKey), "is not a well-formed query parameter name (percent-encode reserved characters)")
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil || strings.Contains(rawValue, ";") {
			// The value is not quoted back: it may be a secret put in
			// the URL by mistake.
			return nil, badQuery(key, "is not a well-formed query value (percent-encode reserved characters)")
		}
		if _, dup := params[key]; dup {
			return nil, badQuery(key, "is given more than once; give it once")
		}
		params[key] = value
	}
	return params, nil
}

// printable bounds and quotes raw client text for an error message.
func printable(s string) string {
	const maxShown = 64
	if len(s) > maxShown {
		s = s[:maxShown] + "..."
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
