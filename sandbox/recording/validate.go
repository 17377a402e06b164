package recording

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// documentHost is the made-up server the validator's copy of the document
// names, so that any request matches whatever host it came to.
const documentHost = "http://document.invalid"

// documentValidator holds the real service's answers to the sandbox's
// OpenAPI document: the document is the sandbox's claim about the real
// service, and each divergence is a place where the claim is wrong.
type documentValidator struct {
	router routers.Router
	// unknown stands for every path and method the document lacks: its
	// only answers are the document's NotFound and MethodNotAllowed.
	unknown *routers.Route
}

func newDocumentValidator() (*documentValidator, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	doc.Servers = openapi3.Servers{{URL: documentHost}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route the OpenAPI document: %w", err)
	}
	notFound, notAllowed := doc.Components.Responses["NotFound"], doc.Components.Responses["MethodNotAllowed"]
	if notFound == nil || notAllowed == nil {
		return nil, errors.New("the OpenAPI document lacks components.responses NotFound or MethodNotAllowed")
	}
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses(
		openapi3.WithStatus(http.StatusNotFound, notFound),
		openapi3.WithStatus(http.StatusMethodNotAllowed, notAllowed),
	)
	unknown := &routers.Route{Spec: doc, Path: "(not in the document)", PathItem: &openapi3.PathItem{}, Operation: op}
	return &documentValidator{router: router, unknown: unknown}, nil
}

// divergences validates the real service's answer to r against the
// operation r matches, and says how it differs: at most
// journal.MaxDivergences divergences, then one line saying how many more
// (see checkedAnswer for the bound on the work). Messages never quote a
// value from the body (it may be patient data), only where and what kind;
// they name the request by shown, its path with credentials redacted.
func (v *documentValidator) divergences(ctx context.Context, r *http.Request, shown string, status int, header http.Header, body []byte) []string {
	probe := r.Clone(ctx)
	u := *r.URL
	probe.URL = &u
	probe.URL.Scheme, probe.URL.Host = "http", "document.invalid"
	probe.Host = "document.invalid"
	route, params, err := v.router.FindRoute(probe)
	if err != nil {
		route, params = v.unknown, nil
	}
	validate := func(multi bool, body []byte) error {
		opts := &openapi3filter.Options{MultiError: multi, IncludeResponseStatus: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
		return openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route, Options: opts},
			Status:                 status,
			Header:                 header,
			Body:                   io.NopCloser(bytes.NewReader(body)),
			Options:                opts,
		})
	}
	// The first pass stops at the first divergence, so a conforming
	// answer of any size costs one walk and no error values.
	first := validate(false, body)
	if first == nil {
		return nil
	}
	checked, partial := checkedAnswer(body)
	errs := flatten(validate(true, checked))
	if len(errs) == 0 {
		// The divergence lies past the values checked.
		errs = flatten(first)
	}
	listed := errs[:min(len(errs), journal.MaxDivergences)]
	out := make([]string, 0, len(listed)+1)
	for _, e := range listed {
		out = append(out, journal.CutValue(divergence(r.Method+" "+shown, route, status, e)))
	}
	if more := len(errs) - len(listed); more > 0 || partial {
		out = append(out, journal.MoreDivergences(more, partial))
	}
	return out
}

// flatten unpacks kin-openapi's nested multi-errors.
func flatten(err error) []error {
	var re *openapi3filter.ResponseError
	if errors.As(err, &re) {
		if _, isHeader := headerOf(re); isHeader {
			// Unpacked, its schema errors would read as places in the body.
			return []error{re}
		}
	}
	var multi openapi3.MultiError
	if errors.As(err, &multi) {
		var out []error
		for _, e := range multi {
			out = append(out, flatten(e)...)
		}
		return out
	}
	if errors.As(err, &re) && re.Err != nil {
		if errors.As(re.Err, &multi) {
			return flatten(re.Err)
		}
	}
	return []error{err}
}

// headerOf names the header a response error is about, which kin-openapi
// quotes in its reason; ok is false for an error about the status or body.
func headerOf(re *openapi3filter.ResponseError) (name string, ok bool) {
	for _, prefix := range []string{"response header ", "unable to decode header "} {
		if rest, found := strings.CutPrefix(re.Reason, prefix); found {
			if quoted, err := strconv.QuotedPrefix(rest); err == nil {
				name, err := strconv.Unquote(quoted)
				return name, err == nil
			}
		}
	}
	return "", false
}

// headerDivergence phrases an error about the answer's header name, never
// quoting its value.
func headerDivergence(name string, status int, re *openapi3filter.ResponseError) string {
	var se *openapi3.SchemaError
	switch {
	case strings.HasSuffix(re.Reason, " missing"):
		return fmt.Sprintf("the real service answered %d without a %s header; the document requires one", status, name)
	case errors.As(re.Err, &se):
		return fmt.Sprintf("the real service answered %s in the %s header of its %d answer; the document says %s", valueKind(se.Value), name, status, schemaReason(se))
	}
	return fmt.Sprintf("the real service answered a %s header in its %d answer that the document's schema for it cannot read", name, status)
}

// schemaReason is what a schema error says the document requires, without
// the value when the reason would quote it.
func schemaReason(se *openapi3.SchemaError) string {
	if se.Reason == "" || strings.Contains(se.Reason, fmt.Sprint(se.Value)) {
		return fmt.Sprintf("it must satisfy %q", se.SchemaField)
	}
	return se.Reason
}

// divergence phrases one validation error as "the real service answered
// X; the document says Y".
func divergence(request string, route *routers.Route, status int, err error) string {
	var re *openapi3filter.ResponseError
	if errors.As(err, &re) {
		if name, ok := headerOf(re); ok {
			return headerDivergence(name, status, re)
		}
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		where := "/" + strings.Join(se.JSONPointer(), "/")
		return fmt.Sprintf("the real service answered %s at %s of its %d body; the document says %s", valueKind(se.Value), where, status, schemaReason(se))
	}
	if errors.As(err, &re) && re.Reason == "status is not supported" {
		codes := slices.Sorted(maps.Keys(route.Operation.Responses.Map()))
		return fmt.Sprintf("the real service answered status %d; the document says %s", status, strings.Join(codes, ", "))
	}
	if errors.As(err, &re) && re.Reason != "" {
		return fmt.Sprintf("the real service answered %d to %s; the document says otherwise: %s", status, request, re.Reason)
	}
	return fmt.Sprintf("the real service answered %d to %s; the document says otherwise: %v", status, request, err)
}

// valueKind names a decoded JSON value's type, never its content.
func valueKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
