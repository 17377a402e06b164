package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

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
// operation r matches, and says how it differs. Messages never quote a
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
	opts := &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route, Options: opts},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                opts,
	}
	err = openapi3filter.ValidateResponse(ctx, input)
	if err == nil {
		return nil
	}
	var out []string
	for _, e := range flatten(err) {
		out = append(out, divergence(r.Method+" "+shown, route, status, e))
	}
	return out
}

// flatten unpacks kin-openapi's nested multi-errors.
func flatten(err error) []error {
	var multi openapi3.MultiError
	if errors.As(err, &multi) {
		var out []error
		for _, e := range multi {
			out = append(out, flatten(e)...)
		}
		return out
	}
	var re *openapi3filter.ResponseError
	if errors.As(err, &re) && re.Err != nil {
		if errors.As(re.Err, &multi) {
			return flatten(re.Err)
		}
	}
	return []error{err}
}

// divergence phrases one validation error as "the real service answered
// X; the document says Y".
func divergence(request string, route *routers.Route, status int, err error) string {
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		where := "/" + strings.Join(se.JSONPointer(), "/")
		reason := se.Reason
		if reason == "" || strings.Contains(reason, fmt.Sprint(se.Value)) {
			reason = fmt.Sprintf("it must satisfy %q", se.SchemaField)
		}
		return fmt.Sprintf("the real service answered %s at %s of its %d body; the document says %s", valueKind(se.Value), where, status, reason)
	}
	var re *openapi3filter.ResponseError
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
