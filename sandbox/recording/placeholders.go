package recording

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/internal/lazyregexp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/placeholder"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// newPlaceholders is the recording proxy's placeholder maker, under a
// fresh key for this instance: it keeps the words the served document
// declares (enum values, path segments, property names) and the member and
// header names the operator listed (serve --upstream-keep).
func newPlaceholders(contract *contractdoc.Contract, kept []string) (*placeholder.Maker, error) {
	doc := openapi.Document()
	if contract != nil {
		doc = contract.Document()
	}
	keep, err := documentWords(doc)
	if err != nil {
		return nil, fmt.Errorf("read the served document's words: %w", err)
	}
	keep.ValuesOf = map[string]bool{}
	for _, name := range kept {
		if name = strings.TrimSpace(name); name != "" {
			// Header names compare in lower case, member names exactly.
			keep.ValuesOf[name], keep.ValuesOf[strings.ToLower(name)] = true, true
		}
	}
	return placeholder.NewRandom(keep)
}

// documentWords collects what an OpenAPI document (as JSON) declares: the
// string values of every enum, the literal segments of every path, and the
// names of every property.
func documentWords(doc []byte) (placeholder.Keep, error) {
	keep := placeholder.Keep{Values: map[string]bool{}, Segments: map[string]bool{}, Members: map[string]bool{}}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return keep, err
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for name, mv := range v {
				switch name {
				case "enum":
					for _, e := range asSlice(mv) {
						if s, ok := e.(string); ok {
							keep.Values[s] = true
						}
					}
				case "properties":
					if props, ok := mv.(map[string]any); ok {
						for p := range props {
							keep.Members[p] = true
						}
					}
				case "paths":
					if paths, ok := mv.(map[string]any); ok {
						for p := range paths {
							for _, seg := range strings.Split(p, "/") {
								if seg != "" && !strings.Contains(seg, "{") {
									keep.Segments[seg] = true
								}
							}
						}
					}
				}
				walk(mv)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return keep, nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// PlaceholderJSON is a body as the journal keeps it: nil when it is not
// JSON or its placeholder form is over journal.MaxUpstreamBody, with why.
func (p *Proxy) PlaceholderJSON(body []byte, credential func(string) bool) (json.RawMessage, string) {
	out, err := p.placeholders.JSON(body, journal.MaxUpstreamBody, credential)
	switch err {
	case nil:
		return out, ""
	case placeholder.ErrTooLong:
		return nil, fmt.Sprintf("over %d bytes", journal.MaxUpstreamBody)
	}
	return nil, "not JSON"
}

// placeholderHeaders are headers as the journal keeps them: credentials
// redacted by name and value (names too), every other value by the
// placeholder rules for headers.
func (p *Proxy) placeholderHeaders(x *redact.Redactor, h http.Header, credential func(string) bool) map[string]string {
	out := x.Headers(h)
	for name, value := range out {
		switch {
		case name == redact.Redacted || value == redact.Redacted:
		case credential(name):
			delete(out, name)
			out[redact.Redacted] = redact.Redacted
		case credential(value):
			out[name] = redact.Redacted
		default:
			out[name] = p.placeholders.Header(name, value)
		}
	}
	return out
}

// placeholderURL is a forwarded URL as the journal keeps it: the real
// service's root as configured, then the path and query by the
// placeholder rules (credentials already redacted).
func (p *Proxy) placeholderURL(redacted string) string {
	roots := []string{p.root, p.auth}
	if len(p.auth) > len(p.root) {
		roots[0], roots[1] = p.auth, p.root // the longer first: AUTH_URL is often under ROOT_URL
	}
	for _, root := range roots {
		if rest, ok := strings.CutPrefix(redacted, root); ok && (rest == "" || rest[0] == '/' || rest[0] == '?') {
			return root + p.placeholders.Location(rest)
		}
	}
	return p.placeholders.URL(redacted)
}

// divergencePointer finds the JSON pointer a divergence names.
var divergencePointer = lazyregexp.New(` at (/.*) of its (\d{3}) body`)

// quoted finds what a divergence's reason quotes.
var quoted = lazyregexp.New(`"(?:[^"\\]|\\.)*"`)

// placeholderDivergences applies placeholderDivergence to each of ds, in
// place, and redacts one that holds a credential.
func (p *Proxy) placeholderDivergences(ds []string, credential func(string) bool) {
	for i, d := range ds {
		if d = p.placeholderDivergence(d); credential(d) {
			d = redact.Redacted
		}
		ds[i] = d
	}
}

// placeholderDivergence replaces, in a divergence message, each member
// name of the JSON pointer it names and each quoted word by its
// placeholder: an upstream's member names can be data (a patient's name
// used as a key), and a validation reason can quote one. Array indexes
// and the document's own words stay.
func (p *Proxy) placeholderDivergence(d string) string {
	if m := divergencePointer().FindStringSubmatchIndex(d); m != nil {
		segments := strings.Split(d[m[2]:m[3]], "/")
		for i, seg := range segments {
			if seg != "" && strings.Trim(seg, "0123456789") != "" {
				segments[i] = p.placeholders.MemberName(seg)
			}
		}
		d = d[:m[2]] + strings.Join(segments, "/") + d[m[3]:]
	}
	return quoted().ReplaceAllStringFunc(d, func(q string) string {
		var s string
		if json.Unmarshal([]byte(q), &s) != nil {
			return `"` + p.placeholders.String(q[1:len(q)-1]) + `"`
		}
		b, _ := json.Marshal(p.placeholders.MemberName(s))
		return string(b)
	})
}

// PlaceholderEntry applies the placeholder rules to what a journal entry
// holds of a forwarded request (path, query, headers) and of the real
// service's answer (Location): they came from or went to the real
// service, so they may carry patient data too.
func (p *Proxy) PlaceholderEntry(e *journal.Entry) {
	e.Path = p.placeholders.Path(e.Path)
	e.Query = p.placeholders.Query(e.Query)
	if e.Location != "" {
		e.Location = p.placeholders.Location(e.Location)
	}
	for name, value := range e.Headers {
		if name != redact.Redacted && value != redact.Redacted {
			e.Headers[name] = p.placeholders.Header(name, value)
		}
	}
}
