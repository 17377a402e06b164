package contractdoc

import (
	"reflect"
	"slices"
	"strings"
)

// merger copies parts of the built-in document (bt) into the contract's
// (ct), with the components they refer to.
type merger struct {
	ct, bt  map[string]any
	targets map[string]string // built-in "section/name" -> its name in ct
}

// copy deep-copies a built-in value, rewriting its component references
// to the names they take in the contract's document.
func (m *merger) copy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if ref, ok := e.(string); k == "$ref" && ok {
				out[k] = m.ref(ref)
				continue
			}
			out[k] = m.copy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = m.copy(e)
		}
		return out
	}
	return v
}

// security copies built-in security requirements, which name their
// schemes without a reference: each scheme is copied as a component is.
func (m *merger) security(v any) []any {
	list, _ := v.([]any)
	out := make([]any, 0, len(list))
	for _, req := range list {
		req, _ := req.(map[string]any)
		copied := map[string]any{}
		for scheme, scopes := range req {
			ref := m.ref("#/components/securitySchemes/" + scheme)
			copied[ref[strings.LastIndex(ref, "/")+1:]] = clone(scopes)
		}
		out = append(out, copied)
	}
	return out
}

// clone deep-copies a decoded JSON value, leaving out the object members
// named in drop wherever they are.
func clone(v any, drop ...string) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if !slices.Contains(drop, k) {
				out[k] = clone(e, drop...)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = clone(e, drop...)
		}
		return out
	}
	return v
}

// ref is the contract's reference to a built-in component, which it
// copies (with the components it refers to) under a name the contract
// does not use.
func (m *merger) ref(ref string) string {
	const prefix = "#/components/"
	parts := strings.SplitN(strings.TrimPrefix(ref, prefix), "/", 2)
	if !strings.HasPrefix(ref, prefix) || len(parts) != 2 {
		return ref
	}
	key := parts[0] + "/" + parts[1]
	if t, ok := m.targets[key]; ok {
		return prefix + parts[0] + "/" + t
	}
	section := object(object(m.ct, "components"), parts[0])
	builtin := object(object(m.bt, "components"), parts[0])[parts[1]]
	if existing, used := section[parts[1]]; used && existing != nil {
		// The contract has a component of this name: when it is the
		// built-in one (a contract that started from the built-in
		// document), it is shared rather than copied a second time.
		m.targets[key] = parts[1]
		if reflect.DeepEqual(withoutTokenURLs(existing), withoutTokenURLs(m.copy(builtin))) {
			return ref
		}
		delete(m.targets, key)
	}
	name := parts[1]
	for {
		if _, used := object(object(m.ct, "components"), parts[0])[name]; !used {
			break
		}
		name = "sandbox." + name
	}
	m.targets[key] = name
	section[name] = nil // reserved: a component that refers to itself finds its name
	section[name] = m.copy(builtin)
	return prefix + parts[0] + "/" + name
}

// withoutTokenURLs is a copy of v without OAuth2 tokenUrls, which differ
// between a served document and the built-in one, and which the merge
// points at the sandbox anyway (rewriteTokenURLs).
func withoutTokenURLs(v any) any { return clone(v, "tokenUrl") }

// resolve follows a local reference in doc.
func resolve(doc map[string]any, v any) any {
	for range 32 {
		o, ok := v.(map[string]any)
		ref, _ := o["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return v
		}
		var at any = doc
		for _, tok := range strings.Split(ref[2:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			obj, _ := at.(map[string]any)
			at = obj[tok]
		}
		v = at
	}
	return v
}
