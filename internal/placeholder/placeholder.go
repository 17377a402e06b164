// Package placeholder replaces values that come from the real service (or
// from a request proxied to it) with placeholders that keep their form and
// never their content: a date stays a valid date, a date-time keeps its
// separator, fraction and offset, an e-mail stays an e-mail, a GUID a GUID,
// digits the same number of digits, free text about its length. The same
// value always gets the same placeholder from one Maker, so relations
// between records survive; the placeholder is a keyed hash of the value
// (HMAC-SHA-256 under a per-Maker random key), so nobody holding a
// recording can reverse it by hashing a dictionary of names.
//
// Only what is provably not patient data is kept as it was: see Keep.
package placeholder

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"strings"
	"sync"
	"unicode/utf8"
)

// Keep lists what a Maker keeps as it is, beyond booleans, nulls and JSON
// structure: words the served OpenAPI document declares and what the
// operator allows. Every map is read-only once given to New.
type Keep struct {
	// Values are string values kept where one is the whole value: the
	// enum values the served document declares.
	Values map[string]bool
	// Segments are the literal path segments of the document's paths
	// ("api", "referrals", "audit-trail"), kept in paths and URLs.
	Segments map[string]bool
	// Members are member names kept even when they are not
	// identifier-like: the property names the document declares.
	Members map[string]bool
	// ValuesOf are member names and (lower-case) header names whose
	// values the operator allowed to be kept (serve --upstream-keep).
	ValuesOf map[string]bool
}

// Maker makes placeholders. Safe for concurrent use.
type Maker struct {
	key  []byte
	keep Keep
	macs sync.Pool
}

// New returns a Maker whose placeholders are keyed by key; two Makers with
// the same key give the same placeholders (tests use that).
func New(key []byte, keep Keep) *Maker {
	m := &Maker{key: append([]byte(nil), key...), keep: keep}
	m.macs.New = func() any { return hmac.New(sha256.New, m.key) }
	return m
}

// NewRandom returns a Maker under a fresh random key: one per instance of
// the sandbox, so placeholders are stable for its life and unrelated to
// any other instance's.
func NewRandom(keep Keep) (*Maker, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("placeholder key: %w", err)
	}
	return New(key, keep), nil
}

// stream is the keyed pseudo-random bytes a placeholder is drawn from:
// the HMAC of the value, then SHA-256 of the previous block and a counter
// when a long value needs more.
type stream struct {
	block [32]byte
	pos   int
	n     uint32
}

func (m *Maker) stream(kind byte, v string) *stream {
	mac := m.macs.Get().(hash.Hash)
	mac.Reset()
	mac.Write([]byte{kind})
	mac.Write([]byte(v))
	s := &stream{}
	mac.Sum(s.block[:0])
	m.macs.Put(mac)
	return s
}

func (s *stream) byte() byte {
	if s.pos == len(s.block) {
		s.n++
		var buf [36]byte
		copy(buf[:], s.block[:])
		binary.BigEndian.PutUint32(buf[32:], s.n)
		s.block = sha256.Sum256(buf[:])
		s.pos = 0
	}
	b := s.block[s.pos]
	s.pos++
	return b
}

// intn is a number in [0, n) for small n (the bias is negligible for
// placeholders).
func (s *stream) intn(n int) int {
	return int(binary.BigEndian.Uint16([]byte{s.byte(), s.byte()})) % n
}

// String returns v's placeholder: v itself only when v is empty, a value
// the served document declares (an enum) or Redacted, otherwise a string
// of the same form (see the package comment).
func (m *Maker) String(v string) string {
	if v == "" || v == Redacted || m.keep.Values[v] {
		return v
	}
	return m.replace(v)
}

// replace is String without the kept values.
func (m *Maker) replace(v string) string {
	switch {
	case isDate(v):
		return m.date(v)
	case isDateTime(v):
		return m.dateTime(v)
	case isGUID(v):
		return m.guid(v)
	case isEmail(v):
		return m.email(v)
	case isURL(v):
		return m.URL(v)
	case strings.ContainsAny(v, " \t\n"):
		return m.text(v)
	}
	return m.chars('s', v)
}

// chars is charsFrom under v's own stream. A short value may draw itself
// (two capitals, as a country code: one time in 676), and a placeholder
// must never be the value it stands for, so it draws again from the same
// stream: still a function of v alone. A value with nothing to draw (all
// punctuation) is its own form, and the bound stops there.
func (m *Maker) chars(kind byte, v string) string {
	s := m.stream(kind, v)
	out := charsFrom(s, v)
	for range maxRedraws {
		if out != v {
			break
		}
		out = charsFrom(s, v)
	}
	return out
}

// maxRedraws bounds chars' draws again: a value with one digit draws itself
// again one time in nine, so after this many the chance is below 1e-8.
const maxRedraws = 8

// charsFrom maps each character to one of its class, drawn from s: a
// digit to a digit (not zero where the value's first digit was not), an
// upper-case letter to an upper-case one, any other letter to a lower-case
// one; ASCII punctuation stays.
func charsFrom(s *stream, v string) string {
	var b strings.Builder
	b.Grow(len(v))
	first := true
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9':
			if first && r != '0' {
				b.WriteByte('1' + byte(s.intn(9)))
			} else {
				b.WriteByte('0' + byte(s.intn(10)))
			}
			first = false
		case r >= 'A' && r <= 'Z':
			b.WriteByte('A' + byte(s.intn(26)))
		case r >= 'a' && r <= 'z', r >= utf8.RuneSelf && isLetter(r):
			b.WriteByte('a' + byte(s.intn(26)))
		case r < utf8.RuneSelf && r >= ' ' && r != 0x7f:
			b.WriteRune(r)
		default:
			// Control characters and non-letters beyond ASCII (emoji,
			// marks) say nothing about form worth keeping.
			b.WriteByte('x')
		}
	}
	return b.String()
}

// text is free text's placeholder: lower-case pseudo-words of three to
// nine letters, one space apart, as long as v in characters, capitalised
// where v was.
func (m *Maker) text(v string) string {
	s := m.stream('t', v)
	n := utf8.RuneCountInString(v)
	var b strings.Builder
	b.Grow(n)
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		w := min(3+s.intn(7), n-b.Len())
		for range w {
			b.WriteByte('a' + byte(s.intn(26)))
		}
	}
	out := []byte(b.String())
	if r, _ := utf8.DecodeRuneInString(v); r >= 'A' && r <= 'Z' && len(out) > 0 && out[0] != ' ' {
		out[0] -= 'a' - 'A'
	}
	return string(out)
}

// email keeps the local part's form and puts it at example.com (RFC 2606):
// the real domain could name an employer or a clinic.
func (m *Maker) email(v string) string {
	local := v[:strings.LastIndexByte(v, '@')]
	return charsFrom(m.stream('e', v), local) + "@example.com"
}

// guid maps the hex digits, keeping their case, the version nibble and a
// variant in 8-b, so a GUID of a version stays one.
func (m *Maker) guid(v string) string {
	s := m.stream('g', v)
	out := []byte(v)
	for i, c := range out {
		if c == '-' || i == 14 {
			continue
		}
		d := "0123456789abcdef"[s.intn(16)]
		if i == 19 && strings.IndexByte("89abAB", c) >= 0 {
			d = "89ab"[s.intn(4)]
		}
		if c >= 'A' && c <= 'F' && d >= 'a' {
			d -= 'a' - 'A'
		}
		out[i] = d
	}
	return string(out)
}

// Number returns a JSON number's placeholder: the same sign, the same
// number of digits before and after the point, the exponent kept (so it
// stays in range for whatever decodes it).
func (m *Maker) Number(v string) string {
	s := m.stream('n', v)
	out := []byte(v)
	lead := true
	for i, c := range out {
		switch {
		case c == 'e' || c == 'E':
			return string(out)
		case c >= '0' && c <= '9':
			if lead && c != '0' {
				out[i] = '1' + byte(s.intn(9))
			} else {
				out[i] = '0' + byte(s.intn(10))
			}
			lead = false
		case c == '.':
			lead = false
		}
	}
	return string(out)
}

func isLetter(r rune) bool {
	return strings.ToLower(string(r)) != strings.ToUpper(string(r))
}
