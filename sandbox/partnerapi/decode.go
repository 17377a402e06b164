package partnerapi

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/referrals-sandbox/referrals-sandbox/internal/strictjson"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// maxUnknownFields caps how many unknown field paths decodeJSON reports, so
// a body full of junk keys cannot produce an unbounded warning header.
const maxUnknownFields = 20

// maxTypeErrors caps how many wrong-type fields one 400 lists.
const maxTypeErrors = 20

// decodeJSON reads r's body as one JSON object into into, which must be a
// non-nil pointer. It accepts fields the target does not know, like the real
// service presumably does, and returns their dotted paths in document order
// (at most maxUnknownFields) so the handler can warn about them.
//
// Errors caused by the request are *reply.RequestError: 415 when the body is not
// declared as JSON, 413 when it is over maxBytes, 400 when it is empty, not
// well-formed, not an object, followed by more data, or holds a value of the
// wrong JSON type. Any other error is a programming error (500).
func decodeJSON(r *http.Request, maxBytes int64, into any) (unknown []string, err error) {
	target := reflect.TypeOf(into)
	if target == nil || target.Kind() != reflect.Pointer || reflect.ValueOf(into).IsNil() {
		return nil, fmt.Errorf("decodeJSON: target must be a non-nil pointer, got %T", into)
	}
	if err := checkJSONContentType(r.Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	body, err := readBody(r, maxBytes)
	if err != nil {
		return nil, err
	}
	return decodeBody(body, into)
}

// decodeBody is decodeJSON on a body already read. A member given twice in
// one object is a 422 naming it before anything is decoded: encoding/json
// would keep the later value without a word.
func decodeBody(body []byte, into any) (unknown []string, err error) {
	if exact, ok := into.(exactJSON); ok {
		if decodeExact(body, exact) {
			return nil, nil
		}
		reflect.ValueOf(into).Elem().SetZero()
	}
	return decodeAnyBody(body, into)
}

// decodeAnyBody is decodeBody for a target of any type: the scan for
// repeated members, then encoding/json.
func decodeAnyBody(body []byte, into any) (unknown []string, err error) {
	// Malformed JSON is a 400 first, whatever it repeats: json.Valid runs
	// only on the rare body with a repeated member.
	if dup, found := strictjson.FindDuplicate(body); found && json.Valid(body) {
		return nil, duplicateError(dup, dottedPath(dup.Path))
	}
	target := reflect.TypeOf(into)
	if decodeKnownObject(body, into) {
		return nil, nil
	}
	// The body has an unknown field, a wrong type, or is not one object: the
	// slow path below explains exactly what, from a clean target.
	reflect.ValueOf(into).Elem().SetZero()
	raw, err := singleObject(body)
	if err != nil {
		return nil, err
	}

	// A first pass over the document against the target's type finds the
	// unknown fields (which encoding/json silently drops) and every value of
	// the wrong type with its full path, array indices included (which
	// encoding/json's UnmarshalTypeError lacks, and it reports only one).
	wk := walker{dec: newWalkDecoder(raw), seen: map[string]bool{}, fields: map[reflect.Type][]jsonField{}}
	if err := wk.value(target.Elem(), ""); err != nil {
		return nil, reply.NewRequestError(http.StatusBadRequest, "malformed JSON: "+err.Error())
	}

	// encoding/json stays the authority on what decodes; the walker only
	// explains its type errors better.
	if err := json.Unmarshal(raw, into); err != nil {
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typ) && len(wk.typeErrs) > 0:
			return nil, typeError(wk.typeErrs)
		case errors.As(err, &typ):
			return nil, typeError([]reply.FieldError{{Field: typ.Field, Message: fmt.Sprintf("expected %s, got a JSON %s", typ.Type, typ.Value)}})
		default:
			return nil, reply.NewRequestError(http.StatusBadRequest, "the request body could not be decoded: "+err.Error())
		}
	}
	return wk.unknown, nil
}

// decodeKnownObject is the fast path taken by almost every request: one
// strict decode of a single JSON object whose fields the target all knows.
// It reports false, leaving into partly filled, when anything is off.
func decodeKnownObject(body []byte, into any) bool {
	if first := trimJSONSpace(body); len(first) == 0 || first[0] != '{' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return false
	}
	_, err := dec.Token()
	return errors.Is(err, io.EOF)
}

// checkJSONContentType accepts application/json and application/*+json with
// any parameters; the media type is case-insensitive (RFC 9110).
func checkJSONContentType(header string) error {
	const want = "Content-Type must be application/json (or another application/*+json type)"
	if header == "application/json" { // what nearly every client sends: nothing to parse
		return nil
	}
	if strings.TrimSpace(header) == "" {
		return reply.NewRequestError(http.StatusUnsupportedMediaType, want+"; the request had none")
	}
	mediaType, _, err := mime.ParseMediaType(header)
	// A malformed parameter (e.g. a bare "charset") still leaves a usable
	// media type; the sandbox should not be stricter than the real service.
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return reply.NewRequestError(http.StatusUnsupportedMediaType, fmt.Sprintf("%s; %q is not a valid media type", want, header))
	}
	if mediaType == "application/json" || (strings.HasPrefix(mediaType, "application/") && strings.HasSuffix(mediaType, "+json")) {
		return nil
	}
	return reply.NewRequestError(http.StatusUnsupportedMediaType, fmt.Sprintf("%s, got %q", want, mediaType))
}

// readBody reads at most maxBytes of the body.
func readBody(r *http.Request, maxBytes int64) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	// A nil ResponseWriter is allowed: MaxBytesReader uses it only to ask
	// the server to close the connection, which the server does on its own
	// when a handler leaves a large body unread.
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, reply.NewRequestError(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than the limit of %d bytes", tooLarge.Limit))
	case err != nil:
		return nil, reply.NewRequestError(http.StatusBadRequest, "the request body could not be read: "+err.Error())
	}
	return body, nil
}

// singleObject checks that body is exactly one well-formed JSON object,
// possibly surrounded by whitespace, and returns it.
func singleObject(body []byte) (json.RawMessage, error) {
	if len(trimJSONSpace(body)) == 0 {
		return nil, reply.NewRequestError(http.StatusBadRequest, "the request body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		var syntax *json.SyntaxError
		switch {
		case errors.As(err, &syntax):
			// Offset counts the bytes read including the offending one.
			return nil, reply.NewRequestError(http.StatusBadRequest, fmt.Sprintf("malformed JSON at %s: %s", position(body, syntax.Offset-1), syntax.Error()))
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, reply.NewRequestError(http.StatusBadRequest, fmt.Sprintf("malformed JSON at %s: unexpected end of input", position(body, int64(len(body)))))
		default:
			return nil, reply.NewRequestError(http.StatusBadRequest, "malformed JSON: "+err.Error())
		}
	}
	if rest := dec.InputOffset(); len(trimJSONSpace(body[rest:])) > 0 {
		at := rest + int64(len(body[rest:])-len(bytes.TrimLeft(body[rest:], " \t\r\n")))
		return nil, reply.NewRequestError(http.StatusBadRequest, fmt.Sprintf("malformed JSON at %s: unexpected data after the top-level object", position(body, at)))
	}
	if raw[0] != '{' {
		return nil, reply.NewRequestError(http.StatusBadRequest, fmt.Sprintf("the request body must be a JSON object, got %s", jsonKind(raw[0])))
	}
	return raw, nil
}

// trimJSONSpace trims the four whitespace characters JSON allows.
func trimJSONSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// position describes a byte offset of body as line, column (in characters,
// both 1-based) and offset, the way editors show it.
func position(body []byte, offset int64) string {
	offset = max(0, min(offset, int64(len(body))))
	before := body[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	column := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Sprintf("line %d, column %d (byte offset %d)", line, column, offset)
}

// jsonKind names the kind of the JSON value starting with b.
func jsonKind(b byte) string {
	switch b {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// dottedPath spells a path as the built-in shapes name fields:
// patient.dateOfBirth, conditions[0].code.
func dottedPath(path []strictjson.Step) string {
	field := ""
	for _, step := range path {
		if step.InArray {
			field += "[" + strconv.FormatInt(step.Index, 10) + "]"
		} else {
			field = joinPath(field, step.Name)
		}
	}
	return field
}

// duplicateError is the 422 for a member given more than once: the detail
// names it as a JSON Pointer, errors by field, spelled as the shapes in use
// name fields (a dotted path for the built-in ones, the JSON Pointer under
// a contract).
func duplicateError(dup strictjson.Duplicate, field string) *reply.RequestError {
	pointer := strconv.QuoteToASCII(dup.Pointer)
	p := reply.New(http.StatusUnprocessableEntity, fmt.Sprintf(
		"the member %s is given more than once (names are compared without regard to case); give each member once: nothing was stored", pointer))
	p.Errors = []reply.FieldError{{Field: field, Message: "is given more than once (JSON Pointer " + pointer + "); give each member once"}}
	return &reply.RequestError{Problem: p}
}

// typeError is the 400 for values of the wrong JSON type.
func typeError(errs []reply.FieldError) *reply.RequestError {
	e := reply.NewRequestError(http.StatusBadRequest, fmt.Sprintf("field %s: %s", errs[0].Field, errs[0].Message))
	if len(errs) > 1 {
		e.Problem.Detail += fmt.Sprintf(" (and %d more wrong-type field(s); see errors)", len(errs)-1)
	}
	e.Problem.Errors = errs
	return e
}

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	name     string
	typ      reflect.Type
	asString bool // the ",string" option: a JSON string holds the value
}

// walker reads a well-formed JSON document token by token alongside the Go
// type it will be decoded into. It recurses only where the Go type has
// structure; values it does not need to inspect are skipped iteratively, so
// deep nesting costs no stack.
type walker struct {
	dec      *jsontext.Decoder
	unknown  []string
	seen     map[string]bool
	typeErrs []reply.FieldError
	fields   map[reflect.Type][]jsonField // per-decode cache of fieldsOf
	// content, when set, is the document being walked: the walker then
	// also reports null values and strings that are not valid UTF-8 or hold
	// NUL in contentErrs (see content.go).
	content     []byte
	contentErrs []reply.FieldError
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// newWalkDecoder reads data with jsontext. Strings that are not valid
// UTF-8 are let through (as U+FFFD) so that the walk goes on and the
// content checks name every such field; a repeated member name, which
// decodeBody refused before any walk, would be an error.
func newWalkDecoder(data []byte) *jsontext.Decoder {
	return jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowInvalidUTF8(true))
}

// more reports whether the object or array being read has another member.
func (w *walker) more() bool {
	k := w.dec.PeekKind()
	return k != '}' && k != ']' && k != 0
}

// value reads the next JSON value, expected to decode into t at path.
func (w *walker) value(t reflect.Type, path string) error {
	start := w.dec.InputOffset()
	tok, err := w.dec.ReadToken()
	if err != nil {
		return err
	}
	if w.content != nil {
		w.checkContent(path, tok, w.content[start:w.dec.InputOffset()])
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// null decodes into anything; custom unmarshalers and interfaces accept
	// whatever they accept, which only decoding can tell.
	kind := tok.Kind()
	if kind == 'n' || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return w.skip(kind)
	}
	switch kind {
	case '{', '[':
		switch {
		case kind == '{' && t.Kind() == reflect.Struct:
			return w.object(path, func(key string) (reflect.Type, bool, bool) {
				f, ok := w.field(t, key)
				return f.typ, f.asString, ok
			})
		case kind == '{' && t.Kind() == reflect.Map:
			return w.object(path, func(string) (reflect.Type, bool, bool) { return t.Elem(), false, true })
		case kind == '[' && (t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 || t.Kind() == reflect.Array):
			for i := 0; w.more(); i++ {
				if err := w.value(t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
			_, err := w.dec.ReadToken() // ]
			return err
		}
		w.mismatch(path, t, jsonKind(byte(kind)))
		return w.skip(kind)
	case '"':
		if t.Kind() != reflect.String && (t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.Uint8) {
			w.mismatch(path, t, "a string")
		}
	case 't', 'f':
		if t.Kind() != reflect.Bool {
			w.mismatch(path, t, "a boolean")
		}
	case '0':
		if !fitsNumber(t, tok.String()) {
			w.mismatch(path, t, "a number")
		}
	}
	return nil
}

// object reads the members of an object whose '{' was read. lookup returns
// the Go type of a member, whether it is a ",string" field, and whether the
// target knows the key at all.
func (w *walker) object(path string, lookup func(key string) (reflect.Type, bool, bool)) error {
	for w.more() {
		tok, err := w.dec.ReadToken()
		if err != nil {
			return err
		}
		key := tok.String()
		memberPath := joinPath(path, key)
		t, asString, known := lookup(key)
		switch {
		case !known:
			w.addUnknown(memberPath)
			err = w.skipNext()
		case asString:
			err = w.skipNext() // encoding/json checks the quoted value itself
		default:
			err = w.value(t, memberPath)
		}
		if err != nil {
			return err
		}
	}
	_, err := w.dec.ReadToken() // }
	return err
}

// skipNext reads and discards the next value.
func (w *walker) skipNext() error { return w.dec.SkipValue() }

// skip discards the rest of a value whose first token was of kind: the
// members of an object or array whose opening was read, and its end.
func (w *walker) skip(kind jsontext.Kind) error {
	if kind != '{' && kind != '[' {
		return nil
	}
	for w.more() {
		if err := w.dec.SkipValue(); err != nil {
			return err
		}
	}
	_, err := w.dec.ReadToken()
	return err
}

func (w *walker) addUnknown(path string) {
	if w.seen[path] || len(w.unknown) >= maxUnknownFields {
		return
	}
	w.seen[path] = true
	w.unknown = append(w.unknown, path)
}

func (w *walker) mismatch(path string, t reflect.Type, got string) {
	if len(w.typeErrs) < maxTypeErrors {
		w.typeErrs = append(w.typeErrs, reply.FieldError{Field: path, Message: fmt.Sprintf("expected %s, got %s", expectedKind(t), got)})
	}
}

// field finds the struct field key decodes into: the exact JSON name first,
// then a case-insensitive match, the order encoding/json uses.
func (w *walker) field(t reflect.Type, key string) (jsonField, bool) {
	fields, ok := w.fields[t]
	if !ok {
		fields = fieldsOf(t, nil)
		w.fields[t] = fields
	}
	for _, f := range fields {
		if f.name == key {
			return f, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, key) {
			return f, true
		}
	}
	return jsonField{}, false
}

// fieldsOf lists the JSON fields of struct type t, including those promoted
// from embedded structs (shallower fields first, so they win on a name
// clash). visiting guards against embedding cycles through pointers.
func fieldsOf(t reflect.Type, visiting map[reflect.Type]bool) []jsonField {
	if visiting[t] {
		return nil
	}
	visiting = mapWith(visiting, t)
	var own, promoted []jsonField
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			promoted = append(promoted, fieldsOf(ft, visiting)...)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		own = append(own, jsonField{name: name, typ: sf.Type, asString: hasOption(opts, "string")})
	}
	return append(own, promoted...)
}

// mapWith returns a copy of m with k set, leaving m untouched for siblings.
func mapWith(m map[reflect.Type]bool, k reflect.Type) map[reflect.Type]bool {
	c := make(map[reflect.Type]bool, len(m)+1)
	for t := range m {
		c[t] = true
	}
	c[k] = true
	return c
}

func hasOption(opts, want string) bool {
	for opt := range strings.SplitSeq(opts, ",") {
		if opt == want {
			return true
		}
	}
	return false
}

// fitsNumber reports whether the JSON number s decodes into kind t.
func fitsNumber(t reflect.Type, s string) bool {
	var err error
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(s, 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		_, err = strconv.ParseUint(s, 10, t.Bits())
	case reflect.Float32, reflect.Float64:
		_, err = strconv.ParseFloat(s, t.Bits())
	case reflect.String:
		return t == reflect.TypeFor[json.Number]() // holds a number verbatim
	default:
		return false
	}
	return err == nil
}

// expectedKind names the JSON kind that decodes into t.
func expectedKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("an integer that fits in %s", t.Kind())
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	default:
		return "a value of Go type " + t.String()
	}
}

// joinPath appends key to a dotted path. Keys that are not plain names are
// quoted in brackets, which also keeps the paths printable ASCII and safe
// to put in a response header.
func joinPath(path, key string) string {
	if !plainKey(key) {
		return path + "[" + strconv.QuoteToASCII(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func plainKey(key string) bool {
	if key == "" {
		return false
	}
	for i, c := range key {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '-')) {
			return false
		}
	}
	return true
}
