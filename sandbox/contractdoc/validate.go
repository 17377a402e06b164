package contractdoc

import (
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/referrals-sandbox/referrals-sandbox/internal/lazyregexp"
)

// MaxErrors caps how many failing fields one refusal lists.
const MaxErrors = 50

// FieldError is one failing member of a submission.
type FieldError struct {
	// Pointer is the member's JSON Pointer ("" for the whole body).
	Pointer string
	Message string
}

// unsupportedMember matches kin-openapi's reason for a member that
// additionalProperties: false refuses.
var unsupportedMember = lazyregexp.New(`^property ("(?:[^"\\]|\\.)*") is unsupported$`)

// formatFn adapts a func to kin-openapi's format validator interface.
type formatFn func(string) error

func (f formatFn) Validate(v string) error { return f(v) }

// formats are checked strictly: kin-openapi's default date pattern would
// take 2023-02-30.
var formats = map[string]openapi3.StringFormatValidator{
	"date": formatFn(func(v string) error {
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return errors.New("must be a real calendar date in the format YYYY-MM-DD")
		}
		return nil
	}),
	"date-time": formatFn(func(v string) error {
		if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
			return errors.New("must be an RFC 3339 date-time such as 2024-05-01T12:00:00Z")
		}
		return nil
	}),
	"email": formatFn(func(v string) error {
		if a, err := mail.ParseAddress(v); err != nil || a.Address != v || a.Name != "" {
			return errors.New("must be a plain email address such as name@example.com")
		}
		return nil
	}),
	"uuid": formatFn(func(v string) error {
		if _, err := uuid.Parse(v); err != nil || len(v) != 36 {
			return errors.New("must be a UUID such as 123e4567-e89b-12d3-a456-426614174000")
		}
		return nil
	}),
}

// Validate checks a decoded submission (encoding/json's any, numbers
// best as json.Number so that int64 ranges are checked exactly) against the
// operation's request schema and returns the failing members, at most
// MaxErrors.
func (o *Op) Validate(body any) []FieldError {
	errs, _ := o.Check(body)
	return errs
}

// Check is Validate, also reporting whether it stopped at MaxErrors with
// members left unchecked: then at least len(errs) members failed. The
// walk stops at the cap, so a body with many failing members costs no more
// than one with MaxErrors of them (see bounded.go).
func (o *Op) Check(body any) (errs []FieldError, more bool) {
	v := &validation{}
	v.visit(o.Request, body, nil)
	return v.out, v.more
}

// kinErrors converts an error of kin-openapi's validator into failing
// members under path, adding them to v.
func (v *validation) kinErrors(err error, path []string) {
	add := func(err error) {
		var se *openapi3.SchemaError
		if !errors.As(err, &se) {
			v.add(pointer(path), err.Error())
			return
		}
		at := append(slices.Clone(path), se.JSONPointer()...)
		// kin-openapi names an unexpected member in its reason only.
		if m := unsupportedMember().FindStringSubmatch(se.Reason); m != nil {
			if name, err := strconv.Unquote(m[1]); err == nil {
				v.add(pointer(append(at, name)), msgUndeclared)
				return
			}
		}
		v.add(pointer(at), reason(se))
	}
	var multi openapi3.MultiError
	if errors.As(err, &multi) {
		for _, e := range flatten(multi) {
			add(e)
		}
	} else {
		add(err)
	}
}

// flatten unnests the MultiErrors kin-openapi returns for nested objects.
func flatten(m openapi3.MultiError) []error {
	var out []error
	for _, e := range m {
		// Only a MultiError itself: a oneOf's error wraps its alternatives'
		// errors, and the member to name is the oneOf's, not theirs.
		if inner, ok := e.(openapi3.MultiError); ok {
			out = append(out, flatten(inner)...)
		} else {
			out = append(out, e)
		}
	}
	return out
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString("/" + escape(t))
	}
	return b.String()
}

// reason is the error's message without kin-openapi's own schema dump.
func reason(se *openapi3.SchemaError) string {
	switch {
	case se.SchemaField == "required":
		return "required"
	case se.Reason != "":
		return se.Reason
	}
	return fmt.Sprintf("fails %s", se.SchemaField)
}
