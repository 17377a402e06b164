package placeholder

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
)

// Redacted replaces a credential wherever one appears, member names
// included: the journal's credential redaction's word.
const Redacted = redact.Redacted

var (
	// ErrNotJSON is JSON's answer for a body that is not one JSON value.
	ErrNotJSON = errors.New("not JSON")
	// ErrTooLong is JSON's answer when the placeholder form would be
	// longer than the limit: the caller keeps none of it.
	ErrTooLong = errors.New("too long")
)

// JSON returns body with its structure, booleans and nulls kept, every
// member name by MemberName, every string by String, every number by
// Number, and every string or name credential reports true for replaced
// by Redacted; values of members the operator allowed (Keep.ValuesOf) are
// kept. The output is compact.
//
// Memory is bounded by limit, whatever the body: the body is checked in
// place (encoding/json's Valid allocates nothing per value), then written
// out one token at a time, and the work stops with ErrTooLong as soon as
// the output passes limit bytes, or a single string does.
func (m *Maker) JSON(body []byte, limit int, credential func(string) bool) ([]byte, error) {
	if !json.Valid(body) {
		return nil, ErrNotJSON
	}
	w := jsonWriter{m: m, in: body, limit: limit, credential: credential}
	w.out = make([]byte, 0, min(len(body), limit)+64)
	if err := w.run(); err != nil {
		return nil, err
	}
	return w.out, nil
}

// jsonWriter walks a body already known to be valid JSON.
type jsonWriter struct {
	m          *Maker
	in, out    []byte
	limit      int
	credential func(string) bool
	// stack holds, for each open container, '{' or '[' and whether its
	// values are kept (an array under a member the operator allowed).
	stack []frame
}

type frame struct {
	kind byte
	keep bool
	// name is true where the next string in an object is a member name.
	name bool
}

func (w *jsonWriter) run() error {
	keepNext := false
	for i := 0; i < len(w.in); {
		c := w.in[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		case '{', '[':
			w.stack = append(w.stack, frame{kind: c, keep: keepNext && c == '[', name: c == '{'})
			w.out = append(w.out, c)
			i, keepNext = i+1, false
		case '}', ']':
			w.stack = w.stack[:len(w.stack)-1]
			w.out = append(w.out, c)
			i++
		case ',':
			if top := w.top(); top != nil && top.kind == '{' {
				top.name = true
			}
			w.out = append(w.out, c)
			i++
		case ':':
			w.out = append(w.out, c)
			i++
		case '"':
			end := stringEnd(w.in, i)
			if end-i > w.limit {
				return ErrTooLong
			}
			s, err := decodeString(w.in[i : end+1])
			if err != nil {
				return ErrNotJSON
			}
			if top := w.top(); top != nil && top.kind == '{' && top.name {
				top.name = false
				keepNext = w.m.keep.ValuesOf[s]
				w.out = appendString(w.out, w.name(s))
			} else {
				w.out = appendString(w.out, w.value(s, keepNext || w.keptHere()))
				keepNext = false
			}
			i = end + 1
		case 't', 'f', 'n':
			j := i
			for j < len(w.in) && w.in[j] >= 'a' && w.in[j] <= 'z' {
				j++
			}
			w.out = append(w.out, w.in[i:j]...)
			i, keepNext = j, false
		default:
			j := i
			for j < len(w.in) && strings.IndexByte("+-.eE0123456789", w.in[j]) >= 0 {
				j++
			}
			if keepNext || w.keptHere() {
				w.out = append(w.out, w.in[i:j]...)
			} else {
				w.out = append(w.out, w.m.Number(string(w.in[i:j]))...)
			}
			i, keepNext = j, false
		}
		if len(w.out) > w.limit {
			return ErrTooLong
		}
	}
	return nil
}

func (w *jsonWriter) top() *frame {
	if len(w.stack) == 0 {
		return nil
	}
	return &w.stack[len(w.stack)-1]
}

// keptHere is true inside an array whose member the operator allowed.
func (w *jsonWriter) keptHere() bool {
	top := w.top()
	return top != nil && top.kind == '[' && top.keep
}

func (w *jsonWriter) name(s string) string {
	if w.credential != nil && w.credential(s) {
		return Redacted
	}
	return w.m.MemberName(s)
}

func (w *jsonWriter) value(s string, kept bool) string {
	switch {
	case w.credential != nil && w.credential(s):
		return Redacted
	case kept:
		return s
	}
	return w.m.String(s)
}

// stringEnd is the index of the quote closing the string opening at i.
func stringEnd(in []byte, i int) int {
	for j := i + 1; j < len(in); j++ {
		switch in[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(in) - 1
}

// decodeString decodes one JSON string literal, quotes included.
func decodeString(lit []byte) (string, error) {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), nil
	}
	var s string
	err := json.Unmarshal(lit, &s)
	return s, err
}

// appendString appends s as a JSON string literal.
func appendString(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}
