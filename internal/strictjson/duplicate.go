// Package strictjson finds what encoding/json decodes silently but a
// request body or a fixture file must not hold: a member given twice in
// one object, where the later value would win unnoticed.
package strictjson

import (
	"bytes"
	"errors"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Step is one step of a path into a JSON document: an object member's name
// or, in an array, an element's index.
type Step struct {
	Name    string
	Index   int64
	InArray bool
}

// Duplicate is a member given more than once in one object.
type Duplicate struct {
	// Pointer is the repeated member's JSON Pointer (RFC 6901), as the
	// later occurrence spells its name.
	Pointer string
	// Path is the same member, step by step.
	Path []Step
	// Offset is the byte offset at which the repetition was read.
	Offset int64
}

// FindDuplicate reads data's first JSON value with jsontext, which refuses
// a name given twice in one object (its default), and also refuses two
// names in one object that differ only in case: encoding/json decodes both
// into the same struct field, the later silently winning. It reports the
// first repetition. Anything else wrong with data (a syntax error, invalid
// UTF-8, trailing data) is left to the decoder, which explains it in its
// own words: FindDuplicate then reports none.
func FindDuplicate(data []byte) (Duplicate, bool) {
	// Invalid UTF-8 is allowed here only so that the walk goes on past it:
	// the content checks name every such field, not just the first.
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowInvalidUTF8(true))
	type level struct {
		step  Step            // how the parent reaches this container
		names map[string]bool // an object's names, folded
		last  string          // an object's latest name
	}
	var stack []level
	path := func(last Step) []Step {
		steps := make([]Step, 0, len(stack))
		for _, l := range stack[1:] {
			steps = append(steps, l.step)
		}
		return append(steps, last)
	}
	for {
		kind, n := dec.StackIndex(dec.StackDepth())
		tok, err := dec.ReadToken()
		if err != nil {
			var syntax *jsontext.SyntacticError
			if errors.As(err, &syntax) && errors.Is(err, jsontext.ErrDuplicateName) && len(stack) > 0 {
				return Duplicate{Pointer: string(syntax.JSONPointer), Path: path(Step{Name: syntax.JSONPointer.LastToken()}), Offset: syntax.ByteOffset}, true
			}
			return Duplicate{}, false
		}
		// The step at which this token sits in its container.
		var at Step
		switch {
		case kind == '[':
			at = Step{Index: n, InArray: true}
		case kind == '{' && len(stack) > 0:
			at = Step{Name: stack[len(stack)-1].last}
		}
		switch k := tok.Kind(); {
		case k == '{' || k == '[':
			stack = append(stack, level{step: at, names: map[string]bool{}})
		case k == '}' || k == ']':
			stack = stack[:len(stack)-1]
		case k == '"' && kind == '{' && n%2 == 0:
			top := &stack[len(stack)-1]
			name := tok.String()
			folded := strings.ToLower(name)
			if top.names[folded] {
				return Duplicate{Pointer: string(dec.StackPointer()), Path: path(Step{Name: name}), Offset: dec.InputOffset()}, true
			}
			top.names[folded] = true
			top.last = name
		}
		if dec.StackDepth() == 0 {
			return Duplicate{}, false
		}
	}
}
