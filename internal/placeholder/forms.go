package placeholder

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/internal/lazyregexp"
)

var (
	dateShape     = lazyregexp.New(`^\d{4}-\d{2}-\d{2}$`)
	dateTimeShape = lazyregexp.New(`^(\d{4}-\d{2}-\d{2})([Tt ])(\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$`)
	guidShape     = lazyregexp.New(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	emailShape    = lazyregexp.New(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
)

func isDate(v string) bool     { return len(v) == 10 && dateShape().MatchString(v) }
func isDateTime(v string) bool { return len(v) >= 19 && dateTimeShape().MatchString(v) }
func isGUID(v string) bool     { return len(v) == 36 && guidShape().MatchString(v) }
func isEmail(v string) bool    { return strings.IndexByte(v, '@') > 0 && emailShape().MatchString(v) }
func isURL(v string) bool {
	return strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "http://")
}

// IsGUID reports whether v is GUID-shaped (request ids that are kept).
func IsGUID(v string) bool { return isGUID(v) }

// date is a valid calendar date between 1920 and 2019 (days 1 to 28, so
// every month has them): a date of birth's placeholder is never in the
// future.
func (m *Maker) date(v string) string {
	return dateFrom(m.stream('d', v))
}

func dateFrom(s *stream) string {
	return fmt.Sprintf("%04d-%02d-%02d", 1920+s.intn(100), 1+s.intn(12), 1+s.intn(28))
}

// dateTime keeps a date-time's separator, fraction digits and offset.
func (m *Maker) dateTime(v string) string {
	p := dateTimeShape().FindStringSubmatch(v)
	s := m.stream('D', v)
	out := dateFrom(s) + p[2] + fmt.Sprintf("%02d:%02d:%02d", s.intn(24), s.intn(60), s.intn(60))
	if p[4] != "" {
		frac := []byte(p[4])
		for i := 1; i < len(frac); i++ {
			frac[i] = '0' + byte(s.intn(10))
		}
		out += string(frac)
	}
	return out + p[5]
}

// URL is an absolute URL's placeholder: its scheme kept, its host's
// labels replaced, its path by Path and its query by Query.
func (m *Maker) URL(v string) string {
	scheme, rest, ok := strings.Cut(v, "://")
	if !ok {
		return m.String(v)
	}
	rest, fragment, hasFragment := strings.Cut(rest, "#")
	rest, query, hasQuery := strings.Cut(rest, "?")
	host, path, hasPath := strings.Cut(rest, "/")
	out := strings.ToLower(scheme) + "://" + m.chars('h', host)
	if hasPath {
		out += m.Path("/" + path)
	}
	if hasQuery {
		out += "?" + m.Query(query)
	}
	if hasFragment {
		out += "#" + m.chars('f', fragment)
	}
	return out
}

// Location is a Location header's (or any URL reference's) placeholder:
// an absolute URL's by URL, a path's by Path and Query.
func (m *Maker) Location(v string) string {
	if !strings.HasPrefix(v, "/") {
		return m.URL(v)
	}
	path, query, hasQuery := strings.Cut(v, "?")
	if hasQuery {
		return m.Path(path) + "?" + m.Query(query)
	}
	return m.Path(path)
}

// Path replaces every segment that is not a literal segment of the
// document's paths; the same segment gets the same placeholder as the
// same value in a body (an id in a path and in the record stay related).
func (m *Maker) Path(p string) string {
	segments := strings.Split(p, "/")
	for i, seg := range segments {
		if seg != "" && !m.keep.Segments[seg] {
			segments[i] = m.String(seg)
		}
	}
	return strings.Join(segments, "/")
}

// Query keeps each parameter's name where it is identifier-like (see
// MemberName) and replaces every value; the pairs stay in their order.
func (m *Maker) Query(raw string) string {
	if raw == "" {
		return ""
	}
	pairs := strings.Split(raw, "&")
	for i, pair := range pairs {
		name, value, hasValue := strings.Cut(pair, "=")
		name = m.escaped(name, m.MemberName)
		if hasValue && !m.keep.ValuesOf[name] {
			value = m.escaped(value, m.String)
		}
		pairs[i] = name
		if hasValue {
			pairs[i] += "=" + value
		}
	}
	return strings.Join(pairs, "&")
}

// escaped applies replace to a query component's decoded text and
// encodes the result again; text that does not decode is replaced as it is.
func (m *Maker) escaped(v string, replace func(string) string) string {
	dec, err := url.QueryUnescape(v)
	if err != nil {
		return replace(v)
	}
	if out := replace(dec); out != dec {
		return url.QueryEscape(out)
	}
	return v
}

// MemberName returns a JSON member (or query parameter) name as it may be
// kept: as it is when it is identifier-like or the document declares it,
// otherwise its placeholder. A name holding a credential is the caller's
// to redact first.
func (m *Maker) MemberName(name string) string {
	if IdentifierLike(name) || name == Redacted || m.keep.Members[name] || m.keep.ValuesOf[name] {
		return name
	}
	return m.String(name)
}

// maxIdentifier is the longest member name kept by its form alone: longer
// ones look more like opaque tokens than like names a schema gives.
const maxIdentifier = 40

// IdentifierLike reports whether name has the form of a name a schema
// gives a member: a lower-case ASCII letter (after an optional $, @ or _),
// then ASCII letters, digits and underscores, at most 40 characters
// (camelCase and snake_case). A capitalised word, a number, a date, an
// e-mail, text with spaces or a GUID is not: data used as a key.
func IdentifierLike(name string) bool {
	if name == "" || len(name) > maxIdentifier {
		return false
	}
	i := 0
	if name[0] == '$' || name[0] == '@' || name[0] == '_' {
		i = 1
	}
	if i >= len(name) || name[i] < 'a' || name[i] > 'z' {
		return false
	}
	for _, c := range []byte(name[i+1:]) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// keptHeaders are the response and request headers whose values are
// kept: media types, caching directives and times, and rate limits
// describe the exchange, never a patient.
var keptHeaders = map[string]bool{
	"content-type": true, "retry-after": true, "cache-control": true, "pragma": true, "expires": true,
	"vary": true, "age": true, "date": true, "last-modified": true,
}

// requestIDHeaders keep their value when it is GUID-shaped.
var requestIDHeaders = map[string]bool{
	"x-request-id": true, "request-id": true, "x-ms-request-id": true, "client-request-id": true,
	"x-ms-client-request-id": true, "x-correlation-id": true,
}

// quotedValue is a quoted-string of a header (RFC 9110 5.6.4).
var quotedValue = lazyregexp.New(`"(?:[^"\\]|\\.)*"`)

// Header returns a header's value as it may be kept: as it is for the
// documented list (Content-Type, Retry-After, RateLimit-* and
// X-RateLimit-*, Cache-Control, Pragma, Expires, Vary, Age, Date,
// Last-Modified, GUID-shaped request ids) and the operator's; in form for
// ETag (weak or strong), WWW-Authenticate (its scheme and parameter names)
// and Location (the document's path segments); otherwise its placeholder.
// Credentials are the caller's to redact first.
func (m *Maker) Header(name, value string) string {
	lower := strings.ToLower(name)
	switch {
	case keptHeaders[lower] || m.keep.ValuesOf[lower],
		strings.HasPrefix(lower, "ratelimit") || strings.HasPrefix(lower, "x-ratelimit"):
		return value
	case lower == "etag":
		tag, weak := strings.CutPrefix(value, "W/")
		if weak {
			return "W/" + m.chars('s', tag)
		}
		return m.chars('s', tag)
	case lower == "www-authenticate":
		return quotedValue().ReplaceAllStringFunc(value, func(q string) string {
			return `"` + m.String(q[1:len(q)-1]) + `"`
		})
	case requestIDHeaders[lower] && isGUID(value):
		return value
	case lower == "location":
		return m.Location(value)
	}
	return m.String(value)
}
