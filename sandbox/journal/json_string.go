package journal

import "unicode/utf8"

// How encoding/json writes a string, in one place for the journal's two
// uses of it: jsonLen counts it for Size, appendJSONString writes it.

// asciiEscape is how encoding/json writes each ASCII byte inside a
// string: 0, as it is; 'u', as \u00XX (the other control characters and
// HTML's); any other byte, as a backslash and that byte. A table, read
// only: a switch per byte made the journal's encoding half as fast.
var asciiEscape = func() (t [utf8.RuneSelf]byte) {
	for c := range 0x20 {
		t[c] = 'u'
	}
	t['<'], t['>'], t['&'] = 'u', 'u', 'u'
	t['"'], t['\\'] = '"', '\\'
	t['\n'], t['\r'], t['\t'], t['\b'], t['\f'] = 'n', 'r', 't', 'b', 'f'
	return t
}()

// runeEscaped reports whether encoding/json writes the rune r, size bytes
// long, as a \uXXXX escape: invalid UTF-8 (as \ufffd), U+2028 and U+2029.
func runeEscaped(r rune, size int) bool {
	return (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029'
}

// jsonLen is the length of s inside a JSON string as encoding/json writes
// it.
func jsonLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			switch asciiEscape[c] {
			case 0:
				n++
			case 'u':
				n += 6
			default:
				n += 2
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if runeEscaped(r, size) {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}

// appendJSONString appends s quoted as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			esc := asciiEscape[c]
			i++
			if esc == 0 {
				continue
			}
			b = append(b, s[done:i-1]...)
			if esc == 'u' {
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			} else {
				b = append(b, '\\', esc)
			}
			done = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !runeEscaped(r, size) {
			i += size
			continue
		}
		b = append(b, s[done:i]...)
		if size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		}
		i += size
		done = i
	}
	b = append(b, s[done:]...)
	return append(b, '"')
}
