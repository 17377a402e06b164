package drift

import (
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/internal/lazyregexp"
)

// comparedHeaders are the headers whose presence and form drift compares,
// besides every RateLimit-* header.
var comparedHeaders = []string{"Content-Type", "WWW-Authenticate", "Retry-After", "Cache-Control", "Pragma", "Expires", "ETag", "Last-Modified", "Vary", "Age"}

// headerForms maps each compared header present in h to its form: never
// its value, only what a client would parse (a media type and the names of
// its parameters, an auth scheme and its parameter names, seconds or a date).
func headerForms(h http.Header) map[string]string {
	forms := map[string]string{}
	for _, name := range comparedHeaders {
		if v := h.Values(name); len(v) > 0 {
			forms[name] = headerForm(name, strings.Join(v, ", "))
		}
	}
	for name, v := range h {
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, "ratelimit") || strings.HasPrefix(lower, "x-ratelimit") {
			forms[http.CanonicalHeaderKey(name)] = rateLimitForm(strings.Join(v, ", "))
		}
	}
	return forms
}

func headerForm(name, v string) string {
	switch name {
	case "Content-Type":
		mediaType, params, err := mime.ParseMediaType(v)
		if err != nil {
			return "unparsable"
		}
		return withNames(mediaType, params)
	case "WWW-Authenticate":
		return authForm(v)
	case "Retry-After", "Expires", "Last-Modified":
		return timeForm(v)
	case "Cache-Control":
		return directives(v)
	case "Vary", "Pragma":
		return strings.ToLower(directives(v))
	case "ETag":
		if strings.HasPrefix(v, "W/") {
			return "weak"
		}
		return "strong"
	}
	return "present"
}

// withNames is a media type followed by the sorted names of its parameters.
func withNames(first string, params map[string]string) string {
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return first
	}
	return first + "; " + strings.Join(names, ", ")
}

var authParamRE = lazyregexp.New(`([A-Za-z][A-Za-z0-9_-]*)\s*=`)

// authForm is the scheme of a challenge and the names of its parameters
// (Bearer realm, error, error_description).
func authForm(v string) string {
	v = strings.TrimSpace(v)
	scheme, rest, _ := strings.Cut(v, " ")
	// Parameter values are quoted strings; take names from outside quotes.
	var outside strings.Builder
	inQuote := false
	for _, r := range rest {
		switch {
		case r == '"':
			inQuote = !inQuote
		case !inQuote:
			outside.WriteRune(r)
		}
	}
	params := map[string]string{}
	for _, m := range authParamRE().FindAllStringSubmatch(outside.String(), -1) {
		params[strings.ToLower(m[1])] = ""
	}
	return withNames(strings.ToLower(scheme), params)
}

func timeForm(v string) string {
	v = strings.TrimSpace(v)
	if _, err := strconv.Atoi(v); err == nil {
		return "seconds"
	}
	if _, err := http.ParseTime(v); err == nil {
		return "HTTP date"
	}
	return "other"
}

func rateLimitForm(v string) string {
	if _, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		return "integer"
	}
	return "structured"
}

// directives are the sorted names of comma-separated directives
// (Cache-Control: no-store, max-age).
func directives(v string) string {
	var names []string
	for d := range strings.SplitSeq(v, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(d), "=")
		if name != "" {
			names = append(names, strings.ToLower(name))
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// compareHeaders appends a difference for every compared header present on
// one side only or in another form.
func compareHeaders(up, sb http.Header, add func(aspect, upstream, sandbox, detail string)) {
	uf, sf := headerForms(up), headerForms(sb)
	names := map[string]bool{}
	for n := range uf {
		names[n] = true
	}
	for n := range sf {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		u, uok := uf[n]
		s, sok := sf[n]
		switch {
		case !sok:
			add("header:"+n, u, "absent", "a header only the upstream sends")
		case !uok:
			add("header:"+n, "absent", s, "a header only the sandbox sends")
		case u != s:
			add("header:"+n, u, s, "the header's form differs")
		}
	}
}
