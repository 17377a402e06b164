package contractdoc

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

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
