package partnerapi

import (
	"bytes"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// encoding/json accepts two things the request schemas forbid and hides
// them: null, which decodes like a missing field, and strings that are not
// valid UTF-8 (raw bytes, or an escaped lone surrogate such as \ud800),
// which it stores as U+FFFD. NUL (\u0000) decodes as is. One rule for every
// submission field: null, invalid UTF-8 and NUL are a 422 naming the field
// (no request schema is nullable; leave an optional field out instead).

// Messages of the content errors.
const (
	msgEmpty       = "must not be empty; leave an optional field out instead"
	msgNull        = "must not be null; leave an optional field out instead"
	msgInvalidUTF8 = "must be valid UTF-8 text (it holds bytes or a lone surrogate escape that are not characters)"
	msgNUL         = "must not contain NUL (U+0000) characters"
)

// DecodeSubmission is decodeJSON for a partner's submission: besides
// decoding, it lists the known fields that are null or hold invalid UTF-8 or
// NUL, for the caller to answer with a 422 alongside the other field errors.
func DecodeSubmission(r *http.Request, maxBytes int64, into any) (unknown []string, invalid []reply.FieldError, err error) {
	if err := checkJSONContentType(r.Header.Get("Content-Type")); err != nil {
		return nil, nil, err
	}
	body, err := readBody(r, maxBytes)
	if err != nil {
		return nil, nil, err
	}
	if unknown, err = decodeBody(body, into); err != nil {
		return nil, nil, err
	}
	return unknown, contentErrors(body, reflect.TypeOf(into).Elem()), nil
}

// contentErrors walks a body that decoded into t and reports its content
// errors. Bodies that cannot hold any (no "null", no \u escape, valid
// UTF-8: nearly all) are not walked.
func contentErrors(body []byte, t reflect.Type) []reply.FieldError {
	if !bytes.Contains(body, []byte("null")) && !bytes.Contains(body, []byte(`\u`)) && !bytes.Contains(body, []byte(`""`)) && utf8.Valid(body) {
		return nil
	}
	w := walker{dec: newWalkDecoder(body), seen: map[string]bool{}, fields: map[reflect.Type][]jsonField{}, content: body}
	if err := w.value(t, ""); err != nil {
		return nil // it decoded already; the walk cannot fail
	}
	return w.contentErrs
}

// checkContent records a content error for the token just read at path;
// raw holds the token's bytes (with any separator before it).
func (w *walker) checkContent(path string, tok jsontext.Token, raw []byte) {
	switch tok.Kind() {
	case 'n':
		w.contentErrs = append(w.contentErrs, reply.FieldError{Field: path, Message: msgNull})
	case '"':
		v := tok.String()
		switch {
		case v == "" && refusesEmpty(path):
			w.contentErrs = append(w.contentErrs, reply.FieldError{Field: path, Message: msgEmpty})
		case replacedCharacters(v, raw):
			w.contentErrs = append(w.contentErrs, reply.FieldError{Field: path, Message: msgInvalidUTF8})
		case strings.ContainsRune(v, 0):
			w.contentErrs = append(w.contentErrs, reply.FieldError{Field: path, Message: msgNUL})
		}
	}
}

// replacedCharacters reports whether decoding put a U+FFFD into s that the
// raw JSON string did not spell, literally or as \ufffd: the mark of
// invalid UTF-8 or a lone surrogate.
func replacedCharacters(s string, raw []byte) bool {
	decoded := strings.Count(s, "\uFFFD")
	if decoded == 0 {
		return false
	}
	spelled := bytes.Count(raw, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(raw), []byte(`\ufffd`))
	return decoded > spelled
}

// withoutFields drops the errors of fields that already have a content
// error, and of the fields inside them: a null firstName is "must not be
// null", not also "required", and a null coding has no "code required".
func withoutFields(errs, content []reply.FieldError) []reply.FieldError {
	if len(content) == 0 {
		return errs
	}
	kept := errs[:0:0]
	for _, e := range errs {
		if !slices.ContainsFunc(content, func(c reply.FieldError) bool { return within(e.Field, c.Field) }) {
			kept = append(kept, e)
		}
	}
	return kept
}

// within reports whether field is path or a field inside it.
func within(field, path string) bool {
	rest, ok := strings.CutPrefix(field, path)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// formattedOptional are the optional submission fields whose format (an
// e-mail address, E.164 phone, postal code, country code, date) refuses an
// empty value, as the OpenAPI document says. The decoder cannot tell ""
// from a missing field, so the walk does: "" is a 422, not an absent field.
var formattedOptional = map[string]bool{
	"email": true, "phone": true, "postalCode": true, "country": true, "qualifiedOn": true,
}

// refusesEmpty reports whether the field at path must not be given empty.
func refusesEmpty(path string) bool {
	name := path[strings.LastIndexByte(path, '.')+1:]
	return formattedOptional[name]
}
