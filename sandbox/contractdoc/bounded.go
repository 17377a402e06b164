package contractdoc

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
)

// msgUndeclared is the failure of a member additionalProperties: false
// refuses.
const msgUndeclared = "not allowed: the schema declares no such member"

// validation walks a submission beside its schema, collecting failing
// members until MaxErrors. kin-openapi's validator builds an error for
// every failing member of a value before it returns, so a body of many
// invalid items costs memory in proportion; this walk descends objects and
// arrays itself, stops at the cap, and hands kin-openapi only what is
// bounded: a scalar, a container's own keywords (without its members), and
// allOf/oneOf in fail-fast mode, whose failures it reports as one error on
// the value, as kin-openapi does.
type validation struct {
	out  []FieldError
	more bool // stopped at the cap with members left unchecked
}

func (v *validation) add(ptr, msg string) {
	if len(v.out) >= MaxErrors {
		v.more = true
		return
	}
	v.out = append(v.out, FieldError{Pointer: ptr, Message: msg})
}

func (v *validation) full() bool {
	if len(v.out) >= MaxErrors {
		v.more = true
		return true
	}
	return false
}

func kinOptions(failFast bool) []openapi3.SchemaValidationOption {
	mode := openapi3.MultiErrors()
	if failFast {
		mode = openapi3.FailFast()
	}
	return []openapi3.SchemaValidationOption{mode, openapi3.VisitAsRequest(), openapi3.EnableFormatValidation(), openapi3.WithStringFormatValidators(formats)}
}

// visit checks value against s; path is the value's JSON Pointer tokens.
func (v *validation) visit(s *openapi3.Schema, value any, path []string) {
	if v.full() || s == nil {
		return
	}
	obj, isObj := value.(map[string]any)
	arr, isArr := value.([]any)
	if !isObj && !isArr {
		v.scalar(s, value, path)
		return
	}
	if s.IsEmpty() {
		return
	}
	if len(s.OneOf) > 0 || len(s.AllOf) > 0 {
		if !v.xOf(s, value, path) {
			return
		}
	}
	// What kin-openapi checks of a container before its members: enum,
	// then type, then (below) its own keywords.
	if len(s.Enum) > 0 || isObj && !s.Type.Permits(openapi3.TypeObject) || isArr && !s.Type.Permits(openapi3.TypeArray) {
		head := &openapi3.Schema{Type: s.Type, Enum: s.Enum, Nullable: s.Nullable}
		if err := head.VisitJSON(value, kinOptions(false)...); err != nil {
			v.kinErrors(err, path)
			return
		}
	}
	if isArr {
		v.array(s, arr, path)
	} else {
		v.object(s, obj, path)
	}
}

// xOf checks the value against the schema's oneOf and allOf, as kin-openapi
// does before anything else, and reports whether they hold. A failure is
// one error on the value: which alternative or part failed is not told,
// so the parts are checked fail-fast.
func (v *validation) xOf(s *openapi3.Schema, value any, path []string) bool {
	if len(s.OneOf) > 0 {
		var matched []int
		for i, alt := range s.OneOf {
			if alt.Value.VisitJSON(value, kinOptions(true)...) == nil {
				matched = append(matched, i)
			}
		}
		switch {
		case len(matched) == 0:
			v.add(pointer(path), `value doesn't match any schema from "oneOf"`)
			return false
		case len(matched) > 1:
			v.add(pointer(path), fmt.Sprintf(`value matches more than one schema from "oneOf" (matches schemas at indices %v)`, matched))
			return false
		}
	}
	if len(s.AllOf) > 0 {
		// The parts together, so that one part's readOnly member is not
		// required by another (kin-openapi looks across them).
		if (&openapi3.Schema{AllOf: s.AllOf}).VisitJSON(value, kinOptions(true)...) != nil {
			v.add(pointer(path), `doesn't match all schemas from "allOf"`)
			return false
		}
	}
	return true
}

func (v *validation) array(s *openapi3.Schema, arr []any, path []string) {
	own := &openapi3.Schema{Type: s.Type, MinItems: s.MinItems, MaxItems: s.MaxItems, UniqueItems: s.UniqueItems}
	if err := own.VisitJSON(arr, kinOptions(false)...); err != nil {
		v.kinErrors(err, path)
	}
	if s.Items == nil {
		return
	}
	for i, item := range arr {
		if v.full() {
			return
		}
		v.visit(s.Items.Value, item, append(path, strconv.Itoa(i)))
	}
}

func (v *validation) object(s *openapi3.Schema, obj map[string]any, path []string) {
	// In kin-openapi's order: readOnly members sent, the member count,
	// each member in name order, then the required ones missing.
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		if p := s.Properties[name].Value; p.ReadOnly && obj[name] != nil {
			v.add(pointer(append(path, name)), fmt.Sprintf("readOnly property %q in request", name))
		}
	}
	if s.MinProps != 0 || s.MaxProps != nil {
		own := &openapi3.Schema{Type: s.Type, MinProps: s.MinProps, MaxProps: s.MaxProps}
		if err := own.VisitJSON(obj, kinOptions(false)...); err != nil {
			v.kinErrors(err, path)
		}
	}
	allowed := s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if v.full() {
			return
		}
		switch p, declared := s.Properties[name]; {
		case declared:
			v.visit(p.Value, obj[name], append(path, name))
		case !allowed:
			v.add(pointer(append(path, name)), msgUndeclared)
		case s.AdditionalProperties.Schema != nil:
			v.visit(s.AdditionalProperties.Schema.Value, obj[name], append(path, name))
		}
	}
	for _, name := range s.Required {
		if _, ok := obj[name]; ok || readOnly(s, name, 0) {
			continue
		}
		v.add(pointer(append(path, name)), "required")
	}
}

// readOnly reports whether s, or one of its allOf parts, declares the
// member readOnly: a request need not send it.
func readOnly(s *openapi3.Schema, name string, depth int) bool {
	if p, ok := s.Properties[name]; ok && p.Value.ReadOnly {
		return true
	}
	for _, part := range s.AllOf {
		if depth < maxExampleDepth && readOnly(part.Value, name, depth+1) {
			return true
		}
	}
	return false
}

// scalar checks a value that is no container: kin-openapi, after an exact
// check of the numeric formats (kin-openapi converts a number to float64
// first, in which 2^63 and 2^63-1 are the same value, and knows no float
// range).
func (v *validation) scalar(s *openapi3.Schema, value any, path []string) {
	if msg, bad := numberFormat(s, value); bad {
		v.add(pointer(path), msg)
		return
	}
	switch s.Format {
	case "int32", "int64", "float", "double":
		// Checked above; kin-openapi would check int64 on the float64
		// conversion, and refuse 2^63-1 as 2^63.
		plain := *s
		plain.Format = ""
		s = &plain
	}
	if err := s.VisitJSON(value, kinOptions(false)...); err != nil {
		v.kinErrors(err, path)
	}
}

// The ranges of the numeric formats, exactly.
var (
	minInt64   = new(big.Rat).SetInt64(math.MinInt64)
	maxInt64   = new(big.Rat).SetInt64(math.MaxInt64)
	minInt32   = new(big.Rat).SetInt64(math.MinInt32)
	maxInt32   = new(big.Rat).SetInt64(math.MaxInt32)
	maxFloat32 = new(big.Rat).SetFloat64(math.MaxFloat32)
	maxFloat64 = new(big.Rat).SetFloat64(math.MaxFloat64)
)

// numberFormat checks a number against its schema's int32, int64, float or
// double format, exactly as written (a json.Number keeps its digits).
func numberFormat(s *openapi3.Schema, value any) (string, bool) {
	var n *big.Rat
	switch x := value.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return "", false // not a number: kin-openapi says so
		}
		n = r
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", false
		}
		n = new(big.Rat).SetFloat64(x)
	case int64:
		n = new(big.Rat).SetInt64(x)
	case int:
		n = new(big.Rat).SetInt64(int64(x))
	default:
		return "", false
	}
	within := func(lo, hi *big.Rat) bool { return n.Cmp(lo) >= 0 && n.Cmp(hi) <= 0 }
	switch s.Format {
	case "int64":
		if n.IsInt() && !within(minInt64, maxInt64) {
			return "must be from -9223372036854775808 to 9223372036854775807 (format int64)", true
		}
	case "int32":
		if n.IsInt() && !within(minInt32, maxInt32) {
			return "must be from -2147483648 to 2147483647 (format int32)", true
		}
	case "float":
		if !within(new(big.Rat).Neg(maxFloat32), maxFloat32) {
			return fmt.Sprintf("must be at most %g in magnitude (format float: a 32-bit floating-point number)", math.MaxFloat32), true
		}
	case "double":
		if !within(new(big.Rat).Neg(maxFloat64), maxFloat64) {
			return fmt.Sprintf("must be at most %g in magnitude (format double: a 64-bit floating-point number)", math.MaxFloat64), true
		}
	}
	return "", false
}
