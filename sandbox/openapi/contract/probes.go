package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Probe is one deliberately bad request the negative-test generator made
// from the document: a valid request with one thing broken.
type Probe struct {
	// Name says what was broken, e.g.
	// `POST /api/v1/referrals/ body patient.firstName: null`.
	Name string
	// OperationID is the operation probed.
	OperationID string
	// Method and URL (path and query, relative to the server) to send.
	Method, URL string
	// Body is the request body, sent as ContentType; nil for none.
	Body        []byte
	ContentType string
	// MustRefuse is set for probes the document cannot express as invalid
	// but the server must refuse all the same (a body that is not UTF-8,
	// which JSON forbids). For every other probe the document decides: a
	// request it refuses must be answered with a documented 4xx.
	MustRefuse bool
}

// ProbeInputs is what the generator needs besides the document: a valid
// request for each operation it probes.
type ProbeInputs struct {
	// PathParams fills the path parameters, by name, of every operation.
	// An operation whose path names a parameter missing here is skipped.
	PathParams map[string]string
	// Body returns a valid JSON body for an operation, or false to use the
	// request schema's example. Every probe of the operation starts from
	// it; a caller whose server wants a unique value (an id) can put a
	// placeholder in and replace it in each probe's Body before sending.
	Body func(operationID string) (any, bool)
	// Query returns the query a valid request of an operation needs (such
	// as a required parameter); nil for none. Each query probe changes one
	// parameter of it.
	Query func(operationID string) url.Values
}

// unknownField is the name the generator gives fields no schema has.
const unknownField = "probeUnknownField"

// invalidUTF8 stands for a string with bytes that are not UTF-8: JSON
// cannot encode them, so the body is patched after encoding.
const invalidUTF8 = "\x00probe-invalid-utf8\x00"

// Probes walks the document and returns, for every operation with a JSON
// request body or query parameters, requests that break one thing each:
// for every body field (recursively, into the first item of arrays) a wrong
// JSON type, null, an empty string, lengths and numbers just past the
// documented bounds and exactly on them, bad formats and enum values, NUL
// characters and invalid UTF-8, and an unknown field in every object; a
// body that is not an object, an empty and a malformed body; for every
// query parameter a wrong type, an empty value, values past its bounds, a
// bad format, a repeated parameter and a malformed escape. Probes are
// sorted by name, so runs are repeatable. An operation with a required
// body for which neither in.Body nor an example gives one is an error: a
// new operation must not escape the probes silently.
func (c *Checker) Probes(in ProbeInputs) ([]Probe, error) {
	var out []Probe
	for _, path := range c.doc.Paths.InMatchingOrder() {
		item := c.doc.Paths.Value(path)
		for method, op := range item.Operations() {
			target, ok := fillPath(path, in.PathParams)
			if !ok {
				continue
			}
			g := probeGen{op: op, method: method, path: path, target: target}
			if err := g.body(in); err != nil {
				return nil, err
			}
			var query url.Values
			if in.Query != nil {
				query = in.Query(op.OperationID)
			}
			g.query(append(item.Parameters, op.Parameters...), query)
			out = append(out, g.probes...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// fillPath replaces {name} segments with params; false when one is missing.
func fillPath(path string, params map[string]string) (string, bool) {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			v, ok := params[strings.Trim(s, "{}")]
			if !ok {
				return "", false
			}
			segs[i] = url.PathEscape(v)
		}
	}
	return strings.Join(segs, "/"), true
}

// probeGen collects the probes of one operation.
type probeGen struct {
	op           *openapi3.Operation
	method, path string
	target       string
	valid        any // the valid body
	probes       []Probe
}

func (g *probeGen) add(what string, p Probe) {
	p.Name = g.method + " " + g.path + " " + what
	p.OperationID = g.op.OperationID
	p.Method = g.method
	if p.URL == "" {
		p.URL = g.target
	}
	g.probes = append(g.probes, p)
}

// body adds the body probes when the operation takes a JSON body.
func (g *probeGen) body(in ProbeInputs) error {
	if g.op.RequestBody == nil || g.op.RequestBody.Value == nil {
		return nil
	}
	valid, ok := any(nil), false
	if in.Body != nil {
		valid, ok = in.Body(g.op.OperationID)
	}
	if form := g.op.RequestBody.Value.Content.Get(formMediaType); form != nil && form.Schema != nil && form.Schema.Value != nil {
		fields, isForm := valid.(url.Values)
		if !isForm {
			return fmt.Errorf("probes: %s %s (%s) takes a form, but there is no valid one: give ProbeInputs.Body a url.Values", g.method, g.path, g.op.OperationID)
		}
		g.form(form.Schema.Value, fields)
		return nil
	}
	mt := g.op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil
	}
	if !ok && mt.Schema.Value.Example != nil {
		valid, ok = mt.Schema.Value.Example, true
	}
	if !ok {
		if g.op.RequestBody.Value.Required {
			return fmt.Errorf("probes: %s %s (%s) takes a body, but there is no valid one: give ProbeInputs.Body one or the schema an example", g.method, g.path, g.op.OperationID)
		}
		valid = map[string]any{}
	}
	// A round trip through JSON makes the body plain maps and slices.
	raw, err := json.Marshal(valid)
	if err != nil {
		return fmt.Errorf("probes: encode the valid body of %s: %w", g.op.OperationID, err)
	}
	if err := json.Unmarshal(raw, &g.valid); err != nil {
		return fmt.Errorf("probes: decode the valid body of %s: %w", g.op.OperationID, err)
	}
	for what, body := range map[string]string{"body: null": "null", "body: an array": "[]", "body: a string": `"x"`, "body: empty": "", "body: malformed": `{"`, "body: empty object": "{}"} {
		g.add(what, Probe{Body: []byte(body), ContentType: "application/json"})
	}
	g.fields("", mt.Schema.Value, nil)
	return nil
}

// formMediaType is the media type of form bodies (the token endpoint).
const formMediaType = "application/x-www-form-urlencoded"

// form adds the probes of a form body: each field of the schema left out,
// empty, given twice and over-long, and an unknown field.
func (g *probeGen) form(s *openapi3.Schema, valid url.Values) {
	with := func(what string, change func(url.Values)) {
		v := url.Values{}
		for k, vs := range valid {
			v[k] = append([]string(nil), vs...)
		}
		change(v)
		g.add("form "+what, Probe{Body: []byte(v.Encode()), ContentType: formMediaType})
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		with(name+": left out", func(v url.Values) { v.Del(name) })
		with(name+": empty", func(v url.Values) { v.Set(name, "") })
		with(name+": given twice", func(v url.Values) { v.Add(name, v.Get(name)+"x") })
		with(name+": 10000 characters", func(v url.Values) { v.Set(name, strings.Repeat("a", 10000)) })
	}
	with(unknownField+": unknown field", func(v url.Values) { v.Set(unknownField, "1") })
}

// fields adds the probes of every property of schema s, found at path
// (nil for the body itself) in the valid body.
func (g *probeGen) fields(name string, s *openapi3.Schema, path []any) {
	if s == nil {
		return
	}
	switch {
	case s.Type.Is(openapi3.TypeObject) || len(s.Properties) > 0:
		g.set(join(name, unknownField)+": unknown field", append(path, unknownField), 1, false)
		props := make([]string, 0, len(s.Properties))
		for p := range s.Properties {
			props = append(props, p)
		}
		sort.Strings(props)
		for _, p := range props {
			if ref := s.Properties[p]; ref != nil {
				g.values(join(name, p), ref.Value, append(append([]any(nil), path...), p))
			}
		}
	case s.Type.Is(openapi3.TypeArray) && s.Items != nil:
		if s.MaxItems != nil && valueAt(g.valid, path) != nil {
			if arr, ok := valueAt(g.valid, path).([]any); ok && len(arr) > 0 {
				long := make([]any, *s.MaxItems+1)
				for i := range long {
					long[i] = arr[0]
				}
				g.set(name+": "+strconv.FormatUint(*s.MaxItems+1, 10)+" items", path, long, false)
			}
		}
		if arr, ok := valueAt(g.valid, path).([]any); ok && len(arr) > 0 {
			g.values(name+"[0]", s.Items.Value, append(append([]any(nil), path...), 0))
		}
	}
}

// values adds the probes of one field with schema s at path, then of its
// own fields.
func (g *probeGen) values(name string, s *openapi3.Schema, path []any) {
	if s == nil {
		return
	}
	g.set(name+": null", path, nil, false)
	switch {
	case s.Type.Is(openapi3.TypeString):
		g.set(name+": a number", path, 42, false)
		g.set(name+": empty", path, "", false)
		g.set(name+": NUL", path, "a\x00b", false)
		g.set(name+": invalid UTF-8", path, invalidUTF8, true)
		if s.MaxLength != nil {
			g.set(name+": "+strconv.FormatUint(*s.MaxLength, 10)+" characters", path, strings.Repeat("a", int(*s.MaxLength)), false)
			g.set(name+": "+strconv.FormatUint(*s.MaxLength+1, 10)+" characters", path, strings.Repeat("a", int(*s.MaxLength)+1), false)
		}
		if len(s.Enum) > 0 {
			g.set(name+": not in the enum", path, "NOT-IN-ENUM", false)
		}
		if bad, ok := badFormats[s.Format]; ok {
			for _, v := range bad {
				g.set(name+": bad "+s.Format+" "+strconv.Quote(v), path, v, false)
			}
		}
		if s.Pattern != "" {
			g.set(name+": breaks the pattern", path, " !", false)
		}
	case s.Type.Is(openapi3.TypeInteger) || s.Type.Is(openapi3.TypeNumber):
		g.set(name+": a string", path, "1", false)
		if s.Type.Is(openapi3.TypeInteger) {
			g.set(name+": a fraction", path, 1.5, false)
		}
		if s.Min != nil {
			g.set(name+": below the minimum", path, *s.Min-1, false)
		}
		if s.Max != nil {
			g.set(name+": above the maximum", path, *s.Max+1, false)
		}
		g.set(name+": huge", path, math.MaxFloat64, false)
	case s.Type.Is(openapi3.TypeBoolean):
		g.set(name+": a string", path, "true", false)
	case s.Type.Is(openapi3.TypeArray):
		g.set(name+": an object", path, map[string]any{}, false)
	default: // an object, or a schema without a type
		g.set(name+": a string", path, "x", false)
		g.set(name+": an array", path, []any{}, false)
	}
	g.fields(name, s, path)
}

// badFormats are values that break a string format.
var badFormats = map[string][]string{
	"date":      {"2021-02-30", "21-01-01"},
	"date-time": {"yesterday", "2021-01-01T00:00:00"},
	"email":     {"not-an-address", "a@b"},
}

// set adds a probe whose body is the valid body with the value at path
// replaced by v. A path whose parent is not in the valid body is skipped.
func (g *probeGen) set(what string, path []any, v any, mustRefuse bool) {
	body, ok := replaced(g.valid, path, v)
	if !ok {
		return
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return // a value JSON cannot hold (never made above)
	}
	if mustRefuse {
		quoted, _ := json.Marshal(invalidUTF8)
		raw = []byte(strings.Replace(string(raw), string(quoted), "\"a\xffb\"", 1))
	}
	g.add("body "+what, Probe{Body: raw, ContentType: "application/json", MustRefuse: mustRefuse})
}

// replaced returns a deep copy of body with the value at path set to v.
func replaced(body any, path []any, v any) (any, bool) {
	if len(path) == 0 {
		return v, true
	}
	switch b := body.(type) {
	case map[string]any:
		key, _ := path[0].(string)
		out := make(map[string]any, len(b)+1)
		for k, x := range b {
			out[k] = x
		}
		if len(path) == 1 {
			out[key] = v
			return out, true
		}
		child, ok := replaced(b[key], path[1:], v)
		out[key] = child
		return out, ok
	case []any:
		i, _ := path[0].(int)
		if i >= len(b) {
			return nil, false
		}
		out := append([]any(nil), b...)
		child, ok := replaced(b[i], path[1:], v)
		out[i] = child
		return out, ok
	}
	return nil, false
}

// valueAt returns the value at path in body, or nil.
func valueAt(body any, path []any) any {
	for _, p := range path {
		switch b := body.(type) {
		case map[string]any:
			key, _ := p.(string)
			body = b[key]
		case []any:
			i, _ := p.(int)
			if i >= len(b) {
				return nil
			}
			body = b[i]
		default:
			return nil
		}
	}
	return body
}

// query adds the probes of every query parameter, each on top of the
// valid query base.
func (g *probeGen) query(params openapi3.Parameters, base url.Values) {
	for _, ref := range params {
		p := ref.Value
		if p == nil || p.In != openapi3.ParameterInQuery || p.Schema == nil || p.Schema.Value == nil {
			continue
		}
		s := p.Schema.Value
		// Raw (already escaped) values. A malformed escape does not parse;
		// a parameter given twice and a number with a plus sign are not
		// errors the document can express, but the sandbox refuses them
		// (issue #11: "a query that does not parse, or a parameter given
		// twice, is a 400").
		type value struct {
			raw  string
			must bool
		}
		values := map[string]value{"empty": {"", false}, "malformed escape": {"%%%", true}, "given twice": {"1&" + p.Name + "=2", true}}
		switch {
		case s.Type.Is(openapi3.TypeInteger):
			values["not a number"] = value{"abc", false}
			values["a fraction"] = value{"1.5", false}
			values["with a plus sign"] = value{"%2B5", true}
			if s.Min != nil {
				values["below the minimum"] = value{strconv.FormatFloat(*s.Min-1, 'f', -1, 64), false}
			}
			if s.Max != nil {
				values["above the maximum"] = value{strconv.FormatFloat(*s.Max+1, 'f', -1, 64), false}
			}
		case s.Format != "":
			for _, v := range badFormats[s.Format] {
				values["bad "+s.Format+" "+strconv.Quote(v)] = value{url.QueryEscape(v), false}
			}
		}
		rest := url.Values{}
		for k, v := range base {
			if k != p.Name {
				rest[k] = v
			}
		}
		prefix := g.target + "?"
		if len(rest) > 0 {
			prefix += rest.Encode() + "&"
		}
		for what, v := range values {
			g.add("query "+p.Name+": "+what, Probe{URL: prefix + p.Name + "=" + v.raw, MustRefuse: v.must})
		}
	}
}

func join(parent, field string) string {
	if parent == "" {
		return field
	}
	return parent + "." + field
}
