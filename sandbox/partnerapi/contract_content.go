package partnerapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// contractContentErrors applies the content rule of content.go to a
// submission a contract checks: a string (member names included) that is
// not valid UTF-8, or holds NUL, is refused by JSON Pointer, since
// encoding/json would silently store U+FFFD in its place. (null is the
// contract's business: its schemas say what is nullable.) It stops at
// contractdoc.MaxErrors; more reports that it stopped with strings left.
func contractContentErrors(body []byte) (errs []reply.FieldError, more bool) {
	if !bytes.Contains(body, []byte(`\u`)) && utf8.Valid(body) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var e fieldErrors
	// path holds one frame per open container: the member name or the
	// index of the value being read in it.
	type frame struct {
		array bool
		index int
		key   string
		isKey bool // an object's next string token is a member name
	}
	var stack []frame
	pointer := func() string {
		var b strings.Builder
		for _, f := range stack {
			if f.array {
				b.WriteString("/" + strconv.Itoa(f.index-1))
			} else {
				b.WriteString("/" + jsonPointerToken(f.key))
			}
		}
		return b.String()
	}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return e, false // the body decoded already; the end of input ends the walk
		}
		if len(e) >= contractdoc.MaxErrors {
			return e, true
		}
		raw := body[start:dec.InputOffset()]
		top := len(stack) - 1
		isKey := top >= 0 && !stack[top].array && stack[top].isKey
		if top >= 0 && stack[top].array && tok != json.Delim(']') {
			stack[top].index++
		}
		if s, ok := tok.(string); ok {
			at := pointer()
			if isKey {
				stack[top].key = s
				at = pointer()
			}
			switch {
			case replacedCharacters(s, raw):
				e.add(at, "%s", msgInvalidUTF8)
			case strings.ContainsRune(s, 0):
				e.add(at, "%s", msgNUL)
			}
		}
		if top >= 0 && !stack[top].array {
			stack[top].isKey = !isKey || tok == json.Delim('}')
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{isKey: true})
		case json.Delim('['):
			stack = append(stack, frame{array: true})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if n := len(stack) - 1; n >= 0 && !stack[n].array {
				stack[n].isKey = true
			}
		}
	}
}
