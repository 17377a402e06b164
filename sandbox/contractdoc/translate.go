package contractdoc

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// defaultDialect is the JSON Schema dialect an OpenAPI 3.1 document's
// schemas use unless jsonSchemaDialect names another.
const defaultDialect = "https://spec.openapis.org/oas/3.1/dialect/base"

// translatedNote tells a reader of the served document that it is the
// OpenAPI 3.0 form of a supplied 3.1 document.
const translatedNote = "\n\n## Translated from OpenAPI 3.1\n\n" +
	"The supplied document is OpenAPI 3.1; the referrals sandbox serves its OpenAPI 3.0 translation, which states the same constraints: " +
	"`type: [T, \"null\"]` as `nullable: true`, `const` as a one-value `enum`, numeric `exclusiveMinimum`/`exclusiveMaximum` as `minimum`/`maximum` with the boolean, " +
	"the first of a schema's `examples` as its `example`, `components.pathItems` inlined where referred to; " +
	"`webhooks`, `jsonSchemaDialect`, `info.summary`, `license.identifier` and `$schema`/`$id`/`$comment` left out (none constrains a request)."

// refusedKeywords are the JSON Schema 2020-12 keywords with no faithful
// OpenAPI 3.0 form: a 3.1 schema using one is refused rather than
// translated with the constraint dropped.
var refusedKeywords = []string{
	"prefixItems", "if", "then", "else", "dependentRequired", "dependentSchemas",
	"unevaluatedProperties", "unevaluatedItems", "patternProperties", "propertyNames",
	"contains", "minContains", "maxContains", "contentEncoding", "contentMediaType", "contentSchema",
	"$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$anchor", "$defs", "$vocabulary",
	"dependencies", "definitions",
}

// ignoredKeywords are schema keywords that constrain nothing and have no
// 3.0 place: they are left out of the translation.
var ignoredKeywords = []string{"$schema", "$id", "$comment"}

// isOpenAPI31 reports whether a decoded document declares OpenAPI 3.1.
func isOpenAPI31(tree any) bool {
	doc, _ := tree.(map[string]any)
	v, _ := doc["openapi"].(string)
	return strings.HasPrefix(v, "3.1.")
}

// translate31 rewrites a decoded OpenAPI 3.1 document, in place, into the
// OpenAPI 3.0 document stating the same constraints, so that the 3.0
// validator (and its JSON Pointer per failing field) checks submissions.
// A construct with no faithful 3.0 form is refused with its JSON Pointer.
// Schemas keep their places, so pointers into the translation name the
// same constructs in the supplied document.
func translate31(doc map[string]any) error {
	doc["openapi"] = "3.0.3"
	if d, ok := doc["jsonSchemaDialect"]; ok {
		if d != defaultDialect {
			return fmt.Errorf("/jsonSchemaDialect: dialect %v is not supported; only the OpenAPI 3.1 default (%s)", d, defaultDialect)
		}
		delete(doc, "jsonSchemaDialect")
	}
	delete(doc, "webhooks") // the sandbox serves no webhooks
	if info, ok := doc["info"].(map[string]any); ok {
		delete(info, "summary")
		desc, _ := info["description"].(string)
		info["description"] = desc + translatedNote
		if lic, ok := info["license"].(map[string]any); ok {
			delete(lic, "identifier")
		}
	}
	if _, ok := doc["paths"]; !ok {
		doc["paths"] = map[string]any{}
	}
	components, _ := doc["components"].(map[string]any)
	if schemes, ok := components["securitySchemes"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(schemes)) {
			if s, _ := schemes[name].(map[string]any); s["type"] == "mutualTLS" {
				return fmt.Errorf("/components/securitySchemes/%s/type: mutualTLS has no OpenAPI 3.0 form", escape(name))
			}
		}
	}
	w := &docWalker{pathItems: map[string]any{}}
	if items, ok := components["pathItems"].(map[string]any); ok {
		// Translated where they are written, then inlined where referred to.
		for _, name := range slices.Sorted(maps.Keys(items)) {
			item, _ := items[name].(map[string]any)
			if _, ref := item["$ref"]; ref {
				return fmt.Errorf("/components/pathItems/%s/$ref: a path item component referring to another is not supported", escape(name))
			}
			if err := w.pathItemOperations(item, "/components/pathItems/"+escape(name)); err != nil {
				return err
			}
			w.pathItems[name] = item
		}
		delete(components, "pathItems")
	}
	if err := eachButExtensions(doc["paths"], "/paths", w.pathItem); err != nil {
		return err
	}
	sections := []struct {
		name string
		f    func(any, string) (any, error)
	}{
		{"schemas", translateSchema}, {"parameters", w.parameter}, {"headers", w.parameter},
		{"requestBodies", w.withContent}, {"responses", w.response}, {"callbacks", w.callback},
	}
	for _, sec := range sections {
		if err := each(components[sec.name], "/components/"+sec.name, sec.f); err != nil {
			return err
		}
	}
	return nil
}

// docWalker finds the schemas of an OpenAPI 3.1 document's objects and
// translates them, object by object as the specification lays them out
// (a member named "schema" is a schema only where the specification puts
// one).
type docWalker struct {
	pathItems map[string]any // components.pathItems, translated, by name
}

// each replaces every member of a map at (or element of an array) by
// f's result.
func each(v any, at string, f func(any, string) (any, error)) error {
	return eachOf(v, at, f, false)
}

// eachButExtensions is each for the maps whose x- members are extensions
// (paths, responses, callbacks), which are left as written.
func eachButExtensions(v any, at string, f func(any, string) (any, error)) error {
	return eachOf(v, at, f, true)
}

func eachOf(v any, at string, f func(any, string) (any, error), extensions bool) error {
	var err error
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if extensions && strings.HasPrefix(k, "x-") {
				continue
			}
			if v[k], err = f(v[k], at+"/"+escape(k)); err != nil {
				return err
			}
		}
	case []any:
		for i := range v {
			if v[i], err = f(v[i], fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// reference reports whether v is a Reference Object, leaving out the
// summary and description 3.1 allows beside a $ref and 3.0 does not.
func reference(v map[string]any) bool {
	if _, ok := v["$ref"]; !ok {
		return false
	}
	delete(v, "summary")
	delete(v, "description")
	return true
}

// pathItem translates a path item, inlining one that refers to
// components.pathItems (which 3.0 lacks).
func (w *docWalker) pathItem(v any, at string) (any, error) {
	item, ok := v.(map[string]any)
	if !ok {
		return v, nil
	}
	if ref, ok := item["$ref"].(string); ok {
		const prefix = "#/components/pathItems/"
		target, found := w.pathItems[unescape(strings.TrimPrefix(ref, prefix))].(map[string]any)
		if !strings.HasPrefix(ref, prefix) || !found {
			return nil, fmt.Errorf("%s/$ref: %s names no path item of components.pathItems", at, ref)
		}
		if err := w.pathItemOperations(item, at); err != nil { // its own members
			return nil, err
		}
		merged := clone(target).(map[string]any)
		for k, e := range item {
			if k != "$ref" && k != "summary" && k != "description" {
				merged[k] = e
			}
		}
		return merged, nil
	}
	return item, w.pathItemOperations(item, at)
}

// pathItemOperations translates a path item's parameters and operations.
func (w *docWalker) pathItemOperations(item map[string]any, at string) error {
	if err := each(item["parameters"], at+"/parameters", w.parameter); err != nil {
		return err
	}
	for _, method := range slices.Sorted(maps.Keys(item)) {
		op, ok := item[method].(map[string]any)
		if !ok || !isMethod(method) {
			continue
		}
		opAt := at + "/" + method
		if err := each(op["parameters"], opAt+"/parameters", w.parameter); err != nil {
			return err
		}
		if op["requestBody"] != nil {
			if _, err := w.withContent(op["requestBody"], opAt+"/requestBody"); err != nil {
				return err
			}
		}
		if err := eachButExtensions(op["responses"], opAt+"/responses", w.response); err != nil {
			return err
		}
		if err := each(op["callbacks"], opAt+"/callbacks", w.callback); err != nil {
			return err
		}
	}
	return nil
}

// parameter translates a parameter or a header: a schema, or content.
func (w *docWalker) parameter(v any, at string) (any, error) {
	p, ok := v.(map[string]any)
	if !ok || reference(p) {
		return v, nil
	}
	if s, ok := p["schema"]; ok {
		var err error
		if p["schema"], err = translateSchema(s, at+"/schema"); err != nil {
			return nil, err
		}
	}
	return w.withContent(p, at)
}

// withContent translates a request body, or any object with content:
// each media type's schema and its encodings' headers.
func (w *docWalker) withContent(v any, at string) (any, error) {
	o, ok := v.(map[string]any)
	if !ok || reference(o) {
		return v, nil
	}
	return o, each(o["content"], at+"/content", func(v any, at string) (any, error) {
		mt, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		if s, ok := mt["schema"]; ok {
			var err error
			if mt["schema"], err = translateSchema(s, at+"/schema"); err != nil {
				return nil, err
			}
		}
		return mt, each(mt["encoding"], at+"/encoding", func(v any, at string) (any, error) {
			enc, _ := v.(map[string]any)
			return v, each(enc["headers"], at+"/headers", w.parameter)
		})
	})
}

// response translates a response's headers and content.
func (w *docWalker) response(v any, at string) (any, error) {
	r, ok := v.(map[string]any)
	if !ok || reference(r) {
		return v, nil
	}
	if err := each(r["headers"], at+"/headers", w.parameter); err != nil {
		return nil, err
	}
	return w.withContent(r, at)
}

// callback translates the path items a callback holds by expression.
func (w *docWalker) callback(v any, at string) (any, error) {
	cb, ok := v.(map[string]any)
	if !ok || reference(cb) {
		return v, nil
	}
	return cb, eachButExtensions(cb, at, w.pathItem)
}

// translateSchema translates one JSON Schema 2020-12 schema (at the JSON
// Pointer at) and every schema under it to OpenAPI 3.0's schema object.
func translateSchema(v any, at string) (any, error) {
	switch v := v.(type) {
	case bool:
		if v {
			return map[string]any{}, nil // true: anything
		}
		return nil, fmt.Errorf("%s: the schema false has no OpenAPI 3.0 form here", at)
	case map[string]any:
		return v, translateSchemaObject(v, at)
	}
	return nil, fmt.Errorf("%s: a schema must be an object or a boolean", at)
}

func translateSchemaObject(s map[string]any, at string) error {
	for _, k := range refusedKeywords {
		if _, ok := s[k]; ok {
			return fmt.Errorf("%s/%s: %s has no OpenAPI 3.0 form; the sandbox refuses it rather than ignore it", at, escape(k), k)
		}
	}
	for _, k := range ignoredKeywords {
		delete(s, k)
	}
	if _, ok := s["nullable"]; ok {
		return fmt.Errorf("%s/nullable: nullable is not an OpenAPI 3.1 keyword (3.1 ignores it); write type: [T, \"null\"]", at)
	}
	if err := translateRef(s); err != nil {
		return err
	}
	if err := translateType(s, at); err != nil {
		return err
	}
	if err := translateConst(s, at); err != nil {
		return err
	}
	if enum, ok := s["enum"].([]any); ok && s["nullable"] == true && !slices.Contains(enum, nil) {
		// 3.1 refuses null by the enum; 3.0's nullable would let it
		// through before the enum is checked.
		delete(s, "nullable")
	}
	for _, bound := range []struct{ exclusive, inclusive string }{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		if err := translateBound(s, at, bound.exclusive, bound.inclusive); err != nil {
			return err
		}
	}
	if ex, ok := s["examples"]; ok {
		// Examples constrain nothing: the first is kept as the example.
		if list, _ := ex.([]any); len(list) > 0 {
			if _, has := s["example"]; !has {
				s["example"] = list[0]
			}
		}
		delete(s, "examples")
	}
	return translateSubschemas(s, at)
}

// translateRef keeps what a 3.1 $ref's siblings say: 3.0 ignores a
// reference's siblings, so constraints beside it move to an allOf.
func translateRef(s map[string]any) error {
	ref, ok := s["$ref"]
	if !ok {
		return nil
	}
	for _, k := range []string{"description", "title", "summary", "example", "examples", "deprecated"} {
		delete(s, k) // annotations, not constraints
	}
	if len(s) == 1 {
		return nil
	}
	delete(s, "$ref")
	all, _ := s["allOf"].([]any)
	s["allOf"] = append([]any{map[string]any{"$ref": ref}}, all...)
	return nil
}

// translateType turns a type array of one type and "null" into the type
// and nullable: true ("integer" beside "number" adds nothing).
func translateType(s map[string]any, at string) error {
	switch t := s["type"].(type) {
	case string:
		if t == "null" {
			return fmt.Errorf("%s/type: type \"null\" alone has no OpenAPI 3.0 form", at)
		}
	case []any:
		var types []string
		nullable := false
		for _, e := range t {
			name, _ := e.(string)
			if name == "null" {
				nullable = true
				continue
			}
			types = append(types, name)
		}
		if len(types) == 2 && slices.Contains(types, "number") && slices.Contains(types, "integer") {
			types = []string{"number"} // every integer is a number
		}
		if len(types) != 1 {
			return fmt.Errorf("%s/type: type %v has no OpenAPI 3.0 form; only one type, or one type and \"null\"", at, t)
		}
		s["type"] = types[0]
		if nullable {
			s["nullable"] = true
		}
	}
	return nil
}

// translateConst turns const into a one-value enum.
func translateConst(s map[string]any, at string) error {
	c, ok := s["const"]
	if !ok {
		return nil
	}
	if _, both := s["enum"]; both {
		return fmt.Errorf("%s/const: const beside enum is not supported; keep one", at)
	}
	if c == nil {
		return fmt.Errorf("%s/const: const null has no OpenAPI 3.0 form", at)
	}
	s["enum"] = []any{c}
	delete(s, "const")
	return nil
}

// translateBound turns a numeric exclusive bound into 3.0's inclusive
// bound with the boolean, keeping the stricter of the two when the schema
// states both.
func translateBound(s map[string]any, at, exclusive, inclusive string) error {
	e, ok := s[exclusive]
	if !ok {
		return nil
	}
	ex, ok := number(e)
	if !ok {
		return fmt.Errorf("%s/%s: %s must be a number in OpenAPI 3.1", at, exclusive, exclusive)
	}
	if in, has := s[inclusive]; has {
		n, ok := number(in)
		if !ok {
			return fmt.Errorf("%s/%s: %s must be a number", at, inclusive, inclusive)
		}
		// The inclusive bound is the stricter one: the exclusive one adds nothing.
		if (inclusive == "minimum" && n > ex) || (inclusive == "maximum" && n < ex) {
			delete(s, exclusive)
			return nil
		}
	}
	s[inclusive] = e
	s[exclusive] = true
	return nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

// translateSubschemas translates the schemas a schema holds.
func translateSubschemas(s map[string]any, at string) error {
	var err error
	if props, ok := s["properties"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if props[name], err = translateSchema(props[name], at+"/properties/"+escape(name)); err != nil {
				return err
			}
		}
	}
	for _, k := range []string{"items", "not"} {
		if sub, ok := s[k]; ok {
			if s[k], err = translateSchema(sub, at+"/"+k); err != nil {
				return err
			}
		}
	}
	if sub, ok := s["additionalProperties"].(map[string]any); ok {
		if err := translateSchemaObject(sub, at+"/additionalProperties"); err != nil {
			return err
		}
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		list, ok := s[k].([]any)
		if !ok {
			continue
		}
		for i := range list {
			if list[i], err = translateSchema(list[i], fmt.Sprintf("%s/%s/%d", at, k, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// unescape decodes a JSON Pointer reference token (RFC 6901).
func unescape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
