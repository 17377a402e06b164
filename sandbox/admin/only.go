package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
)

// Only wraps h in the checks every admin call passes, for the root's
// admin routes (the metrics) as for the package's own. It requires the
// admin token when one is configured (--admin-token).
// Without one the admin API is open, as befits a sandbox on localhost, and
// Guard keeps other sites' pages out. Either way a state-changing
// call with a body must be declared application/json, else 415: a web page
// can send text/plain or a form anywhere without asking, but JSON only
// after a CORS preflight, which the sandbox never grants. A DELETE may come
// without a body (curl -X DELETE; some proxies drop DELETE bodies): a page
// can send a cross-origin DELETE only after that same preflight, so the
// JSON requirement would protect nothing there.
func (a *API) Only(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.Token != "" {
			if !adminTokenMatches(request.Bearer(r), a.cfg.Token) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="referrals-sandbox admin"`)
				a.reply.Problem(w, r, reply.New(http.StatusUnauthorized, "the admin API needs the admin token (--admin-token) as a bearer token"))
				return
			}
		}
		w.Header().Set("Cache-Control", "no-store")
		// The admin API's queries are read as strictly as the API's: a
		// malformed escape, a parameter given twice or given empty is a
		// 400 naming it, never a silently different filter.
		if err := a.checkAdminQuery(r.URL.RawQuery); err != nil {
			a.reply.Fail(w, r, err)
			return
		}
		if stateChanging(r.Method) && !bodylessDelete(r) {
			if err := checkAdminContentType(r.Header.Get("Content-Type")); err != nil {
				a.reply.Problem(w, r, reply.New(http.StatusUnsupportedMediaType, err.Error()))
				return
			}
		}
		h(w, r)
	})
}

// adminTokenMatches compares the SHA-256 digests of the two tokens in
// constant time: subtle.ConstantTimeCompare returns at once for inputs of
// different lengths, which would let a caller time its way to the token's
// length; digests always have the same length.
func adminTokenMatches(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// bodylessDelete reports whether r is a DELETE without a body, which
// needs neither a Content-Type nor {} (see Only).
func bodylessDelete(r *http.Request) bool {
	return r.Method == http.MethodDelete && r.ContentLength == 0
}

// noParams wraps a state-changing admin call that takes no parameters: its
// body must still be a JSON object, with no fields ({}), so that no POST
// can be made without a body a web page cannot send (see Guard).
// A DELETE may have no body at all.
func (a *API) noParams(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if bodylessDelete(r) {
			h(w, r)
			return
		}
		if err := a.decodeAdminBody(r, &struct{}{}); err != nil {
			a.reply.Fail(w, r, err)
			return
		}
		h(w, r)
	}
}

// decodeAdminBody decodes an admin request body strictly: unlike the API,
// which mirrors the real service's tolerance, the admin API refuses unknown
// fields, because a misspelt rule field (probabilty) would silently make a
// rule fire every time.
func (a *API) decodeAdminBody(r *http.Request, into any) error {
	if r.ContentLength == 0 {
		return reply.NewRequestError(http.StatusBadRequest, "the request body is empty; "+adminJSONHint)
	}
	unknown, content, err := a.cfg.Decode(r, into)
	if err != nil {
		return err
	}
	// null, invalid UTF-8 and NUL are refused as on the API: one rule.
	errs := content
	for _, f := range unknown {
		errs = append(errs, reply.FieldError{Field: f, Message: "unknown field"})
	}
	if len(errs) > 0 {
		return &reply.RequestError{Problem: reply.Validation(errs)}
	}
	return nil
}

// checkAdminQuery refuses an admin query the API's query reading refuses, and any
// parameter given empty.
func (a *API) checkAdminQuery(raw string) error {
	q, err := request.StrictQuery(raw)
	if err != nil {
		return err
	}
	for k, v := range q {
		if v == "" {
			return request.BadQuery(k, "is empty; leave it out instead")
		}
	}
	return nil
}
