package contractdoc

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brianvoe/gofakeit/v7"
	"github.com/getkin/kin-openapi/openapi3"
)

// maxExampleTries bounds how many drawn submissions Example discards
// (a pattern the faker fills past a length bound, say) before giving up.
const maxExampleTries = 20

// Example draws a submission that satisfies the operation's request schema
// from f, with the sandbox members set to members (trialId,
// externalSourceId). Properties are visited in name order, so the same
// faker seed draws the same submission.
func (o *Op) Example(f *gofakeit.Faker, members map[Member]string) (json.RawMessage, error) {
	var last []FieldError
	for range maxExampleTries {
		d := &drawer{f: f, left: maxExampleValues}
		drawn := d.example(o.Request, 0)
		if d.left < 0 {
			return nil, fmt.Errorf("%s: an example of the request schema holds more than %d values (schemas reused through references level after level); the sandbox draws none that large", o.Pointer, maxExampleValues)
		}
		v, ok := drawn.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: the request schema is not an object", o.Pointer)
		}
		for m, name := range o.RequestMembers {
			if val, ok := members[m]; ok && val != "" {
				v[name] = val
			}
		}
		if last = o.Validate(v); len(last) == 0 {
			return json.Marshal(v)
		}
	}
	return nil, fmt.Errorf("%s: no example drawn in %d tries satisfies the request schema: %s %s", o.Pointer, maxExampleTries, last[0].Pointer, last[0].Message)
}

// maxExampleDepth stops nesting; check refused recursive schemas, so
// only a very deep document reaches it.
const maxExampleDepth = 32

// maxExampleValues bounds the values one drawn example holds: a schema
// reused at every level of a small document can require an example of
// millions of values.
const maxExampleValues = 100_000

// drawer draws one example from f, counting the values it has left.
type drawer struct {
	f    *gofakeit.Faker
	left int
}

func (d *drawer) example(s *openapi3.Schema, depth int) any {
	if d.left--; depth > maxExampleDepth || d.left < 0 {
		return nil
	}
	f := d.f
	if len(s.Enum) > 0 {
		return s.Enum[f.IntN(len(s.Enum))]
	}
	if len(s.OneOf) > 0 {
		return d.example(s.OneOf[f.IntN(len(s.OneOf))].Value, depth+1)
	}
	switch {
	case len(s.AllOf) > 0 || s.Type.Is("object") || len(s.Properties) > 0:
		return d.exampleObject(s, depth)
	case s.Type.Is("array"):
		lo, hi := uint64(1), uint64(3)
		lo = max(lo, s.MinItems)
		if s.MaxItems != nil {
			hi, lo = min(hi, *s.MaxItems), min(lo, *s.MaxItems)
		}
		hi = max(hi, lo)
		n := int(lo) + f.IntN(int(hi-lo)+1)
		if n > d.left {
			d.left = -1 // minItems past what one example may hold
			return nil
		}
		items := make([]any, n)
		for i := range items {
			items[i] = d.example(s.Items.Value, depth+1)
		}
		return items
	case s.Type.Is("integer"), s.Type.Is("number"):
		lo, hi := 0.0, 100.0
		if s.Min != nil {
			lo = *s.Min
		}
		if s.Max != nil {
			hi = *s.Max
		}
		hi = max(hi, lo)
		if s.Type.Is("integer") {
			return int64(lo) + int64(f.IntN(int(hi-lo)+1))
		}
		return lo + f.Float64()*(hi-lo)
	case s.Type.Is("boolean"):
		return f.Bool()
	}
	return exampleString(f, s)
}

func (d *drawer) exampleObject(s *openapi3.Schema, depth int) map[string]any {
	f := d.f
	out := map[string]any{}
	props := properties(s)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	required := map[string]bool{}
	for _, part := range append([]*openapi3.Schema{s}, allOfValues(s)...) {
		for _, r := range part.Required {
			required[r] = true
		}
	}
	for _, name := range names {
		if required[name] || f.IntN(2) == 0 {
			out[name] = d.example(props[name].Value, depth+1)
		}
	}
	return out
}

func allOfValues(s *openapi3.Schema) []*openapi3.Schema {
	var out []*openapi3.Schema
	for _, part := range s.AllOf {
		out = append(out, part.Value)
		out = append(out, allOfValues(part.Value)...)
	}
	return out
}

func exampleString(f *gofakeit.Faker, s *openapi3.Schema) string {
	switch s.Format {
	case "date":
		return f.DateRange(time.Date(1930, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2005, 12, 31, 0, 0, 0, 0, time.UTC)).Format(time.DateOnly)
	case "date-time":
		return f.DateRange(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)).UTC().Format(time.RFC3339)
	case "email":
		return strings.ToLower(f.FirstName()+"."+f.LastName()) + "@example.com"
	case "uuid":
		return f.UUID()
	}
	if s.Pattern != "" {
		return f.Regex(s.Pattern)
	}
	lo := max(int(s.MinLength), 1)
	hi := lo + 11
	if s.MaxLength != nil {
		hi = min(hi, int(*s.MaxLength))
	}
	hi = max(hi, lo)
	return f.LetterN(uint(lo + f.IntN(hi-lo+1)))
}
