package contract

import "net/http"

// SkipHeader is the request header a test sets to tell the checker that a
// request is deliberately not what the document describes. The transport
// removes it before the request is sent, so the server never sees it.
const SkipHeader = "X-Contract-Skip-Request"

// Values of SkipHeader.
const (
	// SkipRequest marks a request that deliberately breaks the document
	// (malformed JSON, a wrong content type, invalid field or parameter
	// values) on a route the document has. Only the route and method are
	// checked; the response is still validated in full.
	SkipRequest = "1"
	// SkipRoute marks a request whose path or method is deliberately not in
	// the document. The response must be a documented 404 or 405
	// (components.responses NotFound or MethodNotAllowed: the right body,
	// X-Request-Id and, for 405, Allow). It is a violation if the document
	// does have the route.
	SkipRoute = "route"
)

// MarkInvalid marks r as deliberately invalid on a documented route; see
// SkipRequest.
func MarkInvalid(r *http.Request) { r.Header.Set(SkipHeader, SkipRequest) }

// MarkUnknownRoute marks r as going to a path or method the document does
// not have; see SkipRoute.
func MarkUnknownRoute(r *http.Request) { r.Header.Set(SkipHeader, SkipRoute) }
