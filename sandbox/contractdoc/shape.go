package contractdoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// Render builds a record answer: the submitted members the shape declares
// (every one when it declares none), as sent, then the sandbox-owned members
// it declares, from values. A member the sandbox owns is never taken from
// the submission, and one the shape does not declare is left out. Nested
// objects and arrays are shaped the same way by their own schemas.
func (s *Shape) Render(submission json.RawMessage, values map[Member]any) (map[string]any, error) {
	var sent map[string]json.RawMessage
	if len(submission) > 0 {
		if err := json.Unmarshal(submission, &sent); err != nil {
			return nil, err
		}
	}
	return s.root.object(sent, values), nil
}

// node shapes one object or array of a record by its response schema. An
// object keeps the members its schema declares (every member when it
// declares none, or allows others with additionalProperties), each shaped
// by its own node, and takes the sandbox members annotated in it from
// values; an array shapes each item. A nil node keeps a value as sent.
type node struct {
	fields map[string]*node  // declared members; a nil node keeps the member as sent
	owned  map[string]Member // declared members the sandbox fills
	open   bool              // undeclared members are kept as sent
	items  *node             // an array's items
	holds  bool              // owned members live in this object or under it
	placed int               // owned members in this object and under it
}

// value shapes a stored value: a value of another type than the schema's
// (null, say) is kept as sent.
func (n *node) value(raw json.RawMessage, values map[Member]any) any {
	if n == nil {
		return raw
	}
	first := byte(0)
	if t := bytes.TrimSpace(raw); len(t) > 0 {
		first = t[0]
	}
	switch {
	case n.items != nil && first == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return raw
		}
		out := make([]any, len(items))
		for i, it := range items {
			out[i] = n.items.value(it, values)
		}
		return out
	case n.items == nil && first == '{':
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return raw
		}
		return n.object(members, values)
	}
	return raw
}

func (n *node) object(sent map[string]json.RawMessage, values map[Member]any) map[string]any {
	out := map[string]any{}
	for name, v := range sent {
		sub, declared := n.fields[name]
		if _, owned := n.owned[name]; !owned && (n.open || declared) {
			out[name] = sub.value(v, values)
		}
	}
	for name, m := range n.owned {
		if v, ok := values[m]; ok {
			out[name] = v
		}
	}
	// An object holding sandbox members is answered even when the
	// submission had none, so those members are never missing.
	for name, sub := range n.fields {
		if _, ok := out[name]; !ok && sub != nil && sub.holds {
			out[name] = sub.object(nil, values)
		}
	}
	return out
}

// maxPlaced bounds the sandbox members one record holds. A schema
// annotated with one and reused through references level after level would
// place it in every reuse, and the sandbox fills each of them in every
// answer: such a document is refused at load.
const maxPlaced = 256

// shaper builds the nodes of one shape, each schema once: a schema reused
// through references shares its node, so building is linear in the
// document however often it reuses its schemas.
type shaper struct {
	built map[shapeKey]*node
}

// shapeKey is a schema as shaped: under an array's items it refuses sandbox
// members, so it is built apart from the same schema elsewhere.
type shapeKey struct {
	schema  *openapi3.Schema
	inArray bool
}

// newNode builds the node of schema s at pointer at; depth stops a very
// deep document (recursive ones were refused already). inArray is true
// under an array's items, where a sandbox member has no single place; skip
// names a member left as it is (a page's records, shaped on their own).
func (b *shaper) newNode(s *openapi3.Schema, at string, depth int, inArray bool, skip string) (*node, error) {
	if s == nil || depth > maxExampleDepth {
		return nil, nil
	}
	key := shapeKey{s, inArray}
	if n, ok := b.built[key]; ok && skip == "" {
		return n, nil
	}
	n, err := b.build(s, at, depth, inArray, skip)
	if err == nil && skip == "" {
		b.built[key] = n
	}
	return n, err
}

func (b *shaper) build(s *openapi3.Schema, at string, depth int, inArray bool, skip string) (*node, error) {
	if s.Type.Is("array") {
		if s.Items == nil {
			return nil, nil
		}
		items, err := b.newNode(s.Items.Value, at+"/items", depth+1, true, "")
		if err != nil || items == nil {
			return nil, err
		}
		return &node{items: items}, nil
	}
	props := shapeProperties(s)
	if len(props) == 0 {
		return nil, nil
	}
	n := &node{fields: map[string]*node{}, owned: map[string]Member{}, open: allowsOthers(s)}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		prop := props[name]
		if name == skip {
			n.fields[name] = nil
			continue
		}
		ptr := at + "/properties/" + escape(name)
		if v, ok := prop.Value.Extensions[Annotation]; ok {
			str, _ := v.(string)
			switch {
			case !knownMember(str):
				return nil, fmt.Errorf("%s/%s: %v is not a sandbox member; one of %v", ptr, Annotation, v, Members())
			case inArray:
				return nil, fmt.Errorf("%s/%s: a sandbox member inside an array's items is not supported: the record holds one %s", ptr, Annotation, str)
			}
			n.owned[name] = Member(str)
			n.holds = true
			n.placed++
			continue
		}
		sub, err := b.newNode(prop.Value, ptr, depth+1, inArray, "")
		if err != nil {
			return nil, err
		}
		n.fields[name] = sub
		if sub != nil && sub.holds {
			n.holds = true
			n.placed += sub.placed
		}
		if n.placed > maxPlaced {
			return nil, fmt.Errorf("%s: a record here holds more than %d sandbox members (a schema annotated with %s reused through references); the sandbox fills every one in every answer, and refuses a document that places this many", at, maxPlaced, Annotation)
		}
	}
	return n, nil
}

// shapeProperties is every member an object schema declares: its own,
// through allOf, and through any oneOf alternative (a record may be either).
func shapeProperties(s *openapi3.Schema) map[string]*openapi3.SchemaRef {
	out := properties(s)
	for _, alt := range s.OneOf {
		for k, v := range shapeProperties(alt.Value) {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	return out
}

// allowsOthers reports whether the schema (or an allOf part) explicitly
// allows undeclared members: additionalProperties true or a schema.
func allowsOthers(s *openapi3.Schema) bool {
	ap := s.AdditionalProperties
	if ap.Schema != nil || ap.Has != nil && *ap.Has {
		return true
	}
	for _, part := range s.AllOf {
		if allowsOthers(part.Value) {
			return true
		}
	}
	return false
}

// OpenShape is the shape of a record no schema describes: every submitted
// member as sent, and the given sandbox members under their own names.
func OpenShape(members ...Member) *Shape {
	s := &Shape{Owned: map[string]Member{}, root: &node{owned: map[string]Member{}, open: true}}
	for _, m := range members {
		s.Owned[string(m)] = m
		s.root.owned[string(m)] = m
	}
	return s
}

// Members maps every member the sandbox fills in this shape, nested ones
// named by their path from the record (meta.receivedAt), to the sandbox
// member it holds.
func (s *Shape) Members() map[string]Member {
	out := map[string]Member{}
	var walk func(n *node, prefix string)
	walk = func(n *node, prefix string) {
		if n == nil {
			return
		}
		for name, m := range n.owned {
			out[prefix+name] = m
		}
		for name, sub := range n.fields {
			if sub != nil && sub.holds { // only those hold members, and the others may be shared many times over
				walk(sub, prefix+name+".")
			}
		}
	}
	walk(s.root, "")
	return out
}
