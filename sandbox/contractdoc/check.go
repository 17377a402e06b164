package contractdoc

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/getkin/kin-openapi/openapi3"
)

// supportedFormats are the string and number formats the validator checks.
// Any other format refuses the document: an unchecked format would let a
// submission through that the real service refuses.
var supportedFormats = map[string]bool{
	"date": true, "date-time": true, "email": true, "uuid": true,
	"int32": true, "int64": true, "float": true, "double": true,
}

// check walks a schema and every schema under it, refusing constructs the
// validator does not honour, with the JSON Pointer of the construct. It
// returns the schema with every reference inlined, as canonical JSON.
// visiting holds the references being expanded: one met again is a
// recursive schema, which records cannot be shaped by.
func check(s *openapi3.SchemaRef, at string, visiting map[string]bool) (string, error) {
	v, err := walk(s, at, visiting)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", at, err)
	}
	return string(b), nil
}

func walk(s *openapi3.SchemaRef, at string, visiting map[string]bool) (any, error) {
	if s == nil || s.Value == nil {
		return nil, fmt.Errorf("%s: a schema is missing", at)
	}
	if s.Ref != "" {
		if visiting[s.Ref] {
			return nil, fmt.Errorf("%s: recursive schemas are not supported (%s refers to itself)", at, s.Ref)
		}
		visiting = with(visiting, s.Ref)
		at = refPointer(s, at)
	}
	v := s.Value
	switch {
	case v.Not != nil:
		return nil, fmt.Errorf("%s/not: not is not supported", at)
	case len(v.AnyOf) > 0:
		return nil, fmt.Errorf("%s/anyOf: anyOf is not supported; use oneOf", at)
	case v.Discriminator != nil:
		return nil, fmt.Errorf("%s/discriminator: discriminator is not supported", at)
	case v.Format != "" && !supportedFormats[v.Format]:
		return nil, fmt.Errorf("%s/format: format %q is not supported; supported: date, date-time, email, uuid, int32, int64, float, double", at, v.Format)
	}
	if ann, ok := v.Extensions[Annotation]; ok {
		if str, _ := ann.(string); !knownMember(str) {
			return nil, fmt.Errorf("%s/%s: %v is not a sandbox member; one of %v", at, Annotation, ann, Members())
		}
	}
	// The schema's own keywords, then its sub-schemas inlined in place.
	own, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	var out map[string]any
	if err := json.Unmarshal(own, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	if len(v.Properties) > 0 {
		props := map[string]any{}
		names := make([]string, 0, len(v.Properties))
		for name := range v.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if props[name], err = walk(v.Properties[name], at+"/properties/"+escape(name), visiting); err != nil {
				return nil, err
			}
		}
		out["properties"] = props
	}
	if v.Items != nil {
		if out["items"], err = walk(v.Items, at+"/items", visiting); err != nil {
			return nil, err
		}
	}
	if v.AdditionalProperties.Schema != nil {
		if out["additionalProperties"], err = walk(v.AdditionalProperties.Schema, at+"/additionalProperties", visiting); err != nil {
			return nil, err
		}
	}
	for key, list := range map[string]openapi3.SchemaRefs{"allOf": v.AllOf, "oneOf": v.OneOf} {
		if len(list) == 0 {
			continue
		}
		parts := make([]any, len(list))
		for i, part := range list {
			if parts[i], err = walk(part, fmt.Sprintf("%s/%s/%d", at, key, i), visiting); err != nil {
				return nil, err
			}
		}
		out[key] = parts
	}
	return out, nil
}

// with returns a copy of m with k set, leaving m untouched for siblings.
func with(m map[string]bool, k string) map[string]bool {
	c := make(map[string]bool, len(m)+1)
	for key := range m {
		c[key] = true
	}
	c[k] = true
	return c
}

// SameSchemas reports whether the operation's schemas equal other's, every
// reference inlined: the same contract, however the document names its
// components.
func (o *Op) SameSchemas(other *Op) bool {
	return o != nil && other != nil && o.fingerprint == other.fingerprint
}
