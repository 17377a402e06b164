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
	if err := inlinePathItems(doc, components); err != nil {
		return err
	}
	if components != nil {
		delete(components, "pathItems")
		if schemes, ok := components["securitySchemes"].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(schemes)) {
				if s, _ := schemes[name].(map[string]any); s["type"] == "mutualTLS" {
					return fmt.Errorf("/components/securitySchemes/%s/type: mutualTLS has no OpenAPI 3.0 form", escape(name))
				}
			}
		}
		if schemas, ok := components["schemas"].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(schemas)) {
				var err error
				if schemas[name], err = translateSchema(schemas[name], "/components/schemas/"+escape(name)); err != nil {
					return err
				}
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(doc)) {
		if key == "components" {
			for _, section := range slices.Sorted(maps.Keys(components)) {
				if section == "schemas" {
					continue
				}
				if err := translateObjects(components[section], "/components/"+escape(section)); err != nil {
					return err
				}
			}
			continue
		}
		if err := translateObjects(doc[key], "/"+escape(key)); err != nil {
			return err
		}
	}
	return nil
}

// inlinePathItems replaces each path item that refers to
// components.pathItems (which 3.0 lacks) by the item it refers to.
func inlinePathItems(doc, components map[string]any) error {
	paths, _ := doc["paths"].(map[string]any)
	items, _ := components["pathItems"].(map[string]any)
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item, _ := paths[p].(map[string]any)
		ref, _ := item["$ref"].(string)
		const prefix = "#/components/pathItems/"
		if !strings.HasPrefix(ref, prefix) {
			continue
		}
		target, ok := items[unescape(strings.TrimPrefix(ref, prefix))].(map[string]any)
		if !ok || target["$ref"] != nil {
			return fmt.Errorf("/paths/%s/$ref: %s names no path item", escape(p), ref)
		}
		merged := clone(target).(map[string]any)
		for k, v := range item {
			if k != "$ref" && k != "summary" && k != "description" {
				merged[k] = v
			}
		}
		paths[p] = merged
	}
	return nil
}

// translateObjects walks the non-schema part of a document: every
// "schema" member is translated as a schema; a reference's summary and
// description siblings (3.1 only) are left out. Examples and extensions
// are free-form values, left as written.
func translateObjects(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["$ref"].(string); ok {
			delete(v, "summary")
			delete(v, "description")
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			switch {
			case k == "example" || k == "examples" || strings.HasPrefix(k, "x-"):
				continue
			case k == "schema":
				var err error
				if v[k], err = translateSchema(v[k], at+"/schema"); err != nil {
					return err
				}
			default:
				if err := translateObjects(v[k], at+"/"+escape(k)); err != nil {
					return err
				}
			}
		}
	case []any:
		for i, e := range v {
			if err := translateObjects(e, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
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
// and nullable: true.
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
