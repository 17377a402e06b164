package contractdoc

import (
	"fmt"
	"maps"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxDocumentValidation bounds the schema visits kin-openapi's document
// validation makes. It validates each component schema, and each schema of
// an operation's bodies, with a fresh memo: a schema reachable from many of
// them is validated once for each, so a document whose schemas reuse one
// another in a long chain costs it the square of its size. The sandbox
// counts those visits first (stopping at the bound) and refuses a document
// past it. Real documents, which reuse their data types widely, stay far
// below it.
const maxDocumentValidation = 1_000_000

// checkValidationCost refuses a document whose validation by kin-openapi
// would make more than maxDocumentValidation schema visits.
func checkValidationCost(t *openapi3.T) error {
	var roots []*openapi3.SchemaRef
	if t.Components != nil {
		for _, name := range slices.Sorted(maps.Keys(t.Components.Schemas)) {
			roots = append(roots, t.Components.Schemas[name])
		}
		for _, r := range t.Components.RequestBodies {
			if r != nil && r.Value != nil {
				roots = append(roots, contentSchemas(r.Value.Content)...)
			}
		}
		for _, r := range t.Components.Responses {
			if r != nil && r.Value != nil {
				roots = append(roots, contentSchemas(r.Value.Content)...)
			}
		}
	}
	if t.Paths != nil {
		for _, item := range t.Paths.Map() {
			for _, op := range item.Operations() {
				if op.RequestBody != nil && op.RequestBody.Value != nil {
					roots = append(roots, contentSchemas(op.RequestBody.Value.Content)...)
				}
				if op.Responses == nil {
					continue
				}
				for _, r := range op.Responses.Map() {
					if r != nil && r.Value != nil {
						roots = append(roots, contentSchemas(r.Value.Content)...)
					}
				}
			}
		}
	}
	left := maxDocumentValidation
	for _, root := range roots {
		if !reach(root, map[*openapi3.Schema]bool{}, &left) {
			return fmt.Errorf("validating the document would visit its schemas more than %d times (schemas that reuse one another in a long chain, each validated from every schema and body that reaches it); the sandbox refuses a document this costly to load", maxDocumentValidation)
		}
	}
	return nil
}

func contentSchemas(c openapi3.Content) []*openapi3.SchemaRef {
	var out []*openapi3.SchemaRef
	for _, mt := range c {
		if mt != nil && mt.Schema != nil {
			out = append(out, mt.Schema)
		}
	}
	return out
}

// reach visits every schema s reaches once, counting down left; it reports
// false once left is spent.
func reach(s *openapi3.SchemaRef, seen map[*openapi3.Schema]bool, left *int) bool {
	if s == nil || s.Value == nil || seen[s.Value] {
		return true
	}
	if *left--; *left < 0 {
		return false
	}
	seen[s.Value] = true
	v := s.Value
	for _, p := range v.Properties {
		if !reach(p, seen, left) {
			return false
		}
	}
	for _, list := range []openapi3.SchemaRefs{v.AllOf, v.OneOf, v.AnyOf} {
		for _, p := range list {
			if !reach(p, seen, left) {
				return false
			}
		}
	}
	return reach(v.Items, seen, left) && reach(v.AdditionalProperties.Schema, seen, left) && reach(v.Not, seen, left)
}
