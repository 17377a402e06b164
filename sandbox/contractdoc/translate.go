package contractdoc

import (
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

// unescape decodes a JSON Pointer reference token (RFC 6901).
func unescape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
