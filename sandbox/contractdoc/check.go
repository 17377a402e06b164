package contractdoc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// supportedFormats are the string and number formats the validator checks.
// Any other format refuses the document: an unchecked format would let a
// submission through that the real service refuses.
var supportedFormats = map[string]bool{
	"date": true, "date-time": true, "email": true, "uuid": true,
	"int32": true, "int64": true, "float": true, "double": true,
}

// maxSchemasPerValue bounds how many schemas one value of a submission or
// record is checked against through allOf and oneOf, references expanded.
// Validation, shaping and example drawing walk every one of them for every
// value, so a document that reuses a schema inside allOf level after level
// would cost them exponential time; it is refused at load instead.
const maxSchemasPerValue = 1000

// maxSchemaVisits bounds the schema objects one load walks. Each referenced
// schema is walked once, so no document within maxDocumentBytes reaches it;
// it is the backstop that keeps a load bounded whatever the document.
const maxSchemaVisits = 1 << 20

// checker walks a contract's schemas, each referenced schema once: a
// schema reused through references is checked, and fingerprinted, where it
// is written, and every reuse shares the result. The walk is linear in the
// document however often its schemas reuse one another.
type checker struct {
	ctx      context.Context
	done     map[string]checked // by $ref
	visiting map[string]bool    // references being walked: one met again is recursive
	visits   int
}

// checked is what the walk learnt of one schema.
type checked struct {
	print    string // the fingerprint: a hash of the schema, references inlined
	perValue int    // schemas one value is checked against (itself, allOf, oneOf)
}

func newChecker(ctx context.Context) *checker {
	return &checker{ctx: ctx, done: map[string]checked{}, visiting: map[string]bool{}}
}

// check walks a schema and every schema under it, refusing constructs the
// validator does not honour, with the JSON Pointer of the construct. It
// returns the schema's fingerprint: equal for two schemas that are equal
// with every reference inlined, whatever the components are named.
func (c *checker) check(s *openapi3.SchemaRef, at string) (string, error) {
	r, err := c.walk(s, at)
	return r.print, err
}

func (c *checker) walk(s *openapi3.SchemaRef, at string) (checked, error) {
	if s == nil || s.Value == nil {
		return checked{}, fmt.Errorf("%s: a schema is missing", at)
	}
	if s.Ref != "" {
		if r, ok := c.done[s.Ref]; ok {
			return r, nil
		}
		if c.visiting[s.Ref] {
			return checked{}, fmt.Errorf("%s: recursive schemas are not supported (%s refers to itself)", at, s.Ref)
		}
		c.visiting[s.Ref] = true
		defer delete(c.visiting, s.Ref)
		r, err := c.walkValue(s.Value, refPointer(s, at))
		if err == nil {
			c.done[s.Ref] = r
		}
		return r, err
	}
	return c.walkValue(s.Value, at)
}

func (c *checker) walkValue(v *openapi3.Schema, at string) (checked, error) {
	if c.visits++; c.visits > maxSchemaVisits {
		return checked{}, fmt.Errorf("%s: the document holds more than %d schemas; the sandbox refuses a document this large", at, maxSchemaVisits)
	}
	if c.visits%1024 == 0 {
		if err := c.ctx.Err(); err != nil {
			return checked{}, fmt.Errorf("checking the schemas stopped: %w", err)
		}
	}
	switch {
	case v.Not != nil:
		return checked{}, fmt.Errorf("%s/not: not is not supported", at)
	case len(v.AnyOf) > 0:
		return checked{}, fmt.Errorf("%s/anyOf: anyOf is not supported; use oneOf", at)
	case v.Discriminator != nil:
		return checked{}, fmt.Errorf("%s/discriminator: discriminator is not supported", at)
	case v.Format != "" && !supportedFormats[v.Format]:
		return checked{}, fmt.Errorf("%s/format: format %q is not supported; supported: date, date-time, email, uuid, int32, int64, float, double", at, v.Format)
	}
	if ann, ok := v.Extensions[Annotation]; ok {
		if str, _ := ann.(string); !knownMember(str) {
			return checked{}, fmt.Errorf("%s/%s: %v is not a sandbox member; one of %v", at, Annotation, ann, Members())
		}
	}
	// The schema's own keywords (its sub-schemas left out: each is
	// fingerprinted on its own), then its sub-schemas' fingerprints.
	own := *v
	own.Properties, own.Items, own.AdditionalProperties.Schema, own.AllOf, own.OneOf = nil, nil, nil, nil, nil
	b, err := json.Marshal(&own)
	if err != nil {
		return checked{}, fmt.Errorf("%s: %w", at, err)
	}
	h := sha256.New()
	h.Write(b)
	sub := func(label string, s *openapi3.SchemaRef, at string) (checked, error) {
		r, err := c.walk(s, at)
		if err == nil {
			fmt.Fprintf(h, "\n%s=%s", label, r.print)
		}
		return r, err
	}
	for _, name := range slices.Sorted(maps.Keys(v.Properties)) {
		label, _ := json.Marshal(name)
		if _, err := sub("properties/"+string(label), v.Properties[name], at+"/properties/"+escape(name)); err != nil {
			return checked{}, err
		}
	}
	if v.Items != nil {
		if _, err := sub("items", v.Items, at+"/items"); err != nil {
			return checked{}, err
		}
	}
	if v.AdditionalProperties.Schema != nil {
		if _, err := sub("additionalProperties", v.AdditionalProperties.Schema, at+"/additionalProperties"); err != nil {
			return checked{}, err
		}
	}
	perValue := 1
	for _, list := range []struct {
		key   string
		parts openapi3.SchemaRefs
	}{{"allOf", v.AllOf}, {"oneOf", v.OneOf}} {
		for i, part := range list.parts {
			r, err := sub(fmt.Sprintf("%s/%d", list.key, i), part, fmt.Sprintf("%s/%s/%d", at, list.key, i))
			if err != nil {
				return checked{}, err
			}
			perValue = min(perValue+r.perValue, maxSchemasPerValue+1)
		}
	}
	if perValue > maxSchemasPerValue {
		return checked{}, fmt.Errorf("%s: a value here is checked against more than %d schemas through allOf and oneOf (references expanded); the sandbox refuses a document this costly to validate", at, maxSchemasPerValue)
	}
	return checked{print: hex.EncodeToString(h.Sum(nil)), perValue: perValue}, nil
}

// SameSchemas reports whether the operation's schemas equal other's, every
// reference inlined: the same contract, however the document names its
// components.
func (o *Op) SameSchemas(other *Op) bool {
	return o != nil && other != nil && o.fingerprint == other.fingerprint
}
