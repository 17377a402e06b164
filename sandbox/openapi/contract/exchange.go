package contract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// exchange is one request and its response as the checker sees them: the
// operation the request matched and the violations found so far.
type exchange struct {
	c            *Checker
	method, path string

	// route and params are the matched operation; route is nil when the
	// request matched none (reported already, or expected with SkipRoute).
	route  *routers.Route
	params map[string]string
	// req is the request responses are validated against. For HEAD it is a
	// GET: kin-openapi skips HEAD responses entirely, and a HEAD answer
	// must carry the GET's status and headers.
	req *http.Request
	// head is set for a HEAD request: it is checked as a GET without a
	// body, and a 405 (the server does not answer HEAD there) is accepted.
	head bool
	// unknownExpected is set by SkipRoute.
	unknownExpected bool
	// requestInvalid is why an unmarked request does not conform.
	requestInvalid error

	violations []string
}

// checkRequest matches r to an operation and, unless mark says the request
// is deliberately broken, validates it.
func (c *Checker) checkRequest(r *http.Request, mark string) *exchange {
	ex := &exchange{c: c, method: r.Method, path: r.URL.Path, req: r}
	switch mark {
	case "", SkipRequest, SkipRoute:
	default:
		ex.fail("%s: unknown value %q; use %q (invalid request) or %q (unknown route)", SkipHeader, mark, SkipRequest, SkipRoute)
	}

	route, params, err := c.router.FindRoute(r)
	if r.Method == http.MethodHead {
		// The document lists GET operations; a HEAD is checked as their GET.
		get := r.Clone(r.Context())
		get.Method = http.MethodGet
		get.Body = http.NoBody
		ex.req, ex.head = get, true
		if errors.Is(err, routers.ErrMethodNotAllowed) {
			route, params, err = c.router.FindRoute(get)
		}
	}

	if mark == SkipRoute {
		ex.unknownExpected = true
		if err == nil {
			ex.fail("marked %s: %s, but the document has %s %s", SkipHeader, SkipRoute, route.Method, route.Path)
		}
		return ex
	}
	if err != nil {
		ex.fail("%s %s is not in the document (%v); mark the request with contract.MarkUnknownRoute if that is deliberate", r.Method, r.URL.Path, err)
		return ex
	}
	ex.route, ex.params = route, params
	if mark == SkipRequest || ex.head {
		return ex
	}
	opts := validationOptions()
	// Whether the token is good is for the server to decide; tests send bad
	// tokens on purpose.
	opts.AuthenticationFunc = openapi3filter.NoopAuthenticationFunc
	// Defaults would be written into the body; the checker only reads.
	opts.SkipSettingDefaults = true
	input := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(r.Context(), input); err != nil {
		ex.requestInvalid = err
		ex.fail("the request does not conform to the document (mark it with contract.MarkInvalid if that is deliberate): %v", err)
	}
	return ex
}

// checkResponse validates a response against the matched operation, or
// against the document's 404 and 405 responses for an expected unknown
// route. A HEAD response is checked for status and headers only; when the
// server does not answer HEAD on a GET route, a documented 405 is fine.
func (ex *exchange) checkResponse(status int, header http.Header, body []byte) {
	route := ex.route
	switch {
	case ex.unknownExpected:
		route = ex.c.unknown
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			ex.fail("marked as an unknown route, but the status is %d, not 404 or 405", status)
			return
		}
	case route == nil:
		return // the request matched no operation; reported already
	case ex.head && status == http.StatusMethodNotAllowed:
		route = ex.c.unknown
	}
	if route == nil {
		return // a supplied document without the sandbox's 404 and 405
	}
	opts := validationOptions()
	opts.IncludeResponseStatus = true
	opts.ExcludeResponseBody = ex.head
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: ex.req, PathParams: ex.params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                opts,
	}
	if err := openapi3filter.ValidateResponse(ex.req.Context(), input); err != nil {
		ex.fail("the response does not conform to the document: %v%s", err, documentedStatuses(route, err))
	}
}

// documentedStatuses lists the statuses the operation does document when
// err says the response's status is not among them, so the message shows
// what was expected.
func documentedStatuses(route *routers.Route, err error) string {
	var re *openapi3filter.ResponseError
	if !errors.As(err, &re) || re.Reason != "status is not supported" {
		return ""
	}
	codes := slices.Sorted(maps.Keys(route.Operation.Responses.Map()))
	return " (documented: " + strings.Join(codes, ", ") + ")"
}

func (ex *exchange) fail(format string, args ...any) {
	ex.violations = append(ex.violations, fmt.Sprintf(format, args...))
}

// messages formats the violations, once the response (or its absence) is
// known, so every message carries the status.
func (ex *exchange) messages(status string) []string {
	out := make([]string, 0, len(ex.violations))
	for _, v := range ex.violations {
		out = append(out, fmt.Sprintf("contract: %s %s -> %s: %s", ex.method, ex.path, status, v))
	}
	return out
}
