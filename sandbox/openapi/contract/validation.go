package contract

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

// maxValueInMessage bounds how much of an offending value a violation
// quotes; a missing property is reported on its whole parent object.
const maxValueInMessage = 200

// conciseSchemaError formats a schema violation on one line: where, why and
// the value, without kin-openapi's default dump of the whole schema, which
// for a QualifiedReferral runs to hundreds of lines per violation.
func conciseSchemaError(err *openapi3.SchemaError) string {
	reason := err.Reason
	switch {
	case err.Origin != nil:
		reason = err.Origin.Error()
	case reason == "":
		reason = fmt.Sprintf("does not satisfy %q", err.SchemaField)
	}
	value, merr := json.Marshal(err.Value)
	if merr != nil {
		value = []byte(fmt.Sprintf("%v", err.Value))
	}
	if len(value) > maxValueInMessage {
		value = append(value[:maxValueInMessage:maxValueInMessage], "..."...)
	}
	return fmt.Sprintf("at %q: %s (value: %s)", "/"+strings.Join(err.JSONPointer(), "/"), reason, value)
}

// validationOptions are the kin-openapi options of every check; request
// and response specifics are added by the caller.
func validationOptions() *openapi3filter.Options {
	opts := &openapi3filter.Options{MultiError: true}
	opts.WithCustomSchemaErrorFunc(conciseSchemaError)
	return opts
}
