// Package contract holds the sandbox to its OpenAPI document in tests. A
// Checker wraps an HTTP transport: every request a test sends is matched to
// an operation of the document (and validated against it), and every
// response is validated against what that operation documents: the status
// code, the content type, the body's schema and the required headers. A
// violation fails the test.
//
// Only tests import this package; it is not linked into the sandbox binary.
//
// Authentication is the server's business: security requirements are never
// checked. Requests a test sends broken on purpose are marked with
// SkipHeader (see MarkInvalid and MarkUnknownRoute).
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package contract

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// Names of the document's responses for routes it does not have.
const (
	notFoundResponse         = "NotFound"
	methodNotAllowedResponse = "MethodNotAllowed"
)

// Checker validates traffic against the OpenAPI document. It is safe for
// concurrent use; nothing in it changes after New.
type Checker struct {
	t      testing.TB
	doc    *openapi3.T
	router routers.Router
	// unknown is a made-up route whose only responses are the document's
	// 404 and 405, for requests marked SkipRoute.
	unknown *routers.Route
}

// New loads the documents (openapi.Document() and openapi.AdminDocument(),
// so admin routes are held to theirs), replaces its servers with
// baseURL (e.g. an httptest.Server's URL), validates the document itself and
// returns a checker reporting to t. Requests must use baseURL's scheme and
// host to be matched. Any error fails t at once.
func New(t testing.TB, baseURL string) *Checker {
	t.Helper()
	c, err := newChecker(t.Context(), baseURL)
	if err != nil {
		t.Fatalf("contract: %v", err)
	}
	c.t = t
	return c
}

// NewFor is New for another document, such as one a sandbox runs with
// --contract (JSON): it holds traffic to that document alone, with servers
// replaced by baseURL (the sandbox's URL, plus /api/v1 when the document
// writes its paths under it). Probes then generates from that document.
func NewFor(t testing.TB, baseURL string, document []byte) *Checker {
	t.Helper()
	c, err := newCheckerFor(t.Context(), baseURL, document)
	if err != nil {
		t.Fatalf("contract: %v", err)
	}
	c.t = t
	return c
}

// newChecker does New's work without a testing.TB, so its errors can be
// tested.
func newChecker(ctx context.Context, baseURL string) (*Checker, error) {
	doc, err := sandboxDocument()
	if err != nil {
		return nil, err
	}
	return newCheckerOn(ctx, baseURL, doc, true)
}

// sandboxDocument is the sandbox's own document with the admin paths
// added, loaded and validated once per test binary: that takes a good part
// of a second of CPU, and every test sandbox makes a checker. Checkers
// only read it, as a server reads the document it routes with.
var sandboxDocument = sync.OnceValues(func() (*openapi3.T, error) {
	ctx := context.Background()
	doc, err := loadDocument(ctx, openapi.Document())
	if err != nil {
		return nil, err
	}
	if err := addAdminPaths(ctx, doc); err != nil {
		return nil, err
	}
	return doc, nil
})

// newCheckerFor is NewFor's work: a supplied document, without the admin
// paths.
func newCheckerFor(ctx context.Context, baseURL string, document []byte) (*Checker, error) {
	doc, err := loadDocument(ctx, document)
	if err != nil {
		return nil, err
	}
	return newCheckerOn(ctx, baseURL, doc, false)
}

// loadDocument loads and validates an OpenAPI document.
func loadDocument(ctx context.Context, document []byte) (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(document)
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is invalid: %w", err)
	}
	return doc, nil
}

// parseBaseURL checks that baseURL is an absolute http or https URL.
func parseBaseURL(baseURL string) (*url.URL, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("base URL %q: %w", baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base URL %q: want an absolute http or https URL", baseURL)
	}
	return u, nil
}

// newCheckerOn routes a loaded, validated document under baseURL. The
// document is not changed: a shallow copy carries baseURL as its only
// server, and shares the paths and components, which nothing writes.
func newCheckerOn(ctx context.Context, baseURL string, loaded *openapi3.T, withAdmin bool) (*Checker, error) {
	if _, err := parseBaseURL(baseURL); err != nil {
		return nil, err
	}
	doc := *loaded
	doc.Servers = openapi3.Servers{{URL: strings.TrimSuffix(baseURL, "/")}}
	if err := doc.Servers.Validate(ctx); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is invalid: %w", err)
	}
	router, err := gorillamux.NewRouter(&doc)
	if err != nil {
		return nil, fmt.Errorf("route the OpenAPI document: %w", err)
	}
	// A supplied document may not describe the sandbox's 404 and 405: an
	// expected unknown route is then checked for its status only.
	unknown, err := unknownRoute(&doc)
	if err != nil && withAdmin {
		return nil, err
	}
	return &Checker{doc: &doc, router: router, unknown: unknown}, nil
}

// unknownRoute builds the route responses to SkipRoute requests are
// validated against, from the document's own NotFound and MethodNotAllowed
// responses, so the document stays the one description of them.
func unknownRoute(doc *openapi3.T) (*routers.Route, error) {
	var notFound, notAllowed *openapi3.ResponseRef
	if doc.Components != nil {
		notFound, notAllowed = doc.Components.Responses[notFoundResponse], doc.Components.Responses[methodNotAllowedResponse]
	}
	if notFound == nil || notAllowed == nil {
		return nil, fmt.Errorf("the OpenAPI document lacks components.responses %s or %s", notFoundResponse, methodNotAllowedResponse)
	}
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses(
		openapi3.WithStatus(http.StatusNotFound, notFound),
		openapi3.WithStatus(http.StatusMethodNotAllowed, notAllowed),
	)
	return &routers.Route{Spec: doc, Path: "(not in the document)", PathItem: &openapi3.PathItem{}, Operation: op}, nil
}

// Transport wraps base (nil means http.DefaultTransport): every request is
// checked against the document before it is sent and every response after
// it arrives. Violations fail the checker's test with t.Errorf, naming the
// method, path, status and kin-openapi's error; the request and response
// still go through, so the test can go on. Bodies are read into memory and
// restored, so callers read them as usual. SkipHeader is removed before
// sending.
func (c *Checker) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{c: c, base: base}
}

// Client returns a new HTTP client whose transport is Transport(nil).
func (c *Checker) Client() *http.Client {
	return &http.Client{Transport: c.Transport(nil)}
}
