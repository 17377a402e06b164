package admin

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/internal/logthrottle"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// adminPrefix starts every path the sandbox adds to the real service.
const adminPrefix = "/__sandbox/"

// Guard keeps web pages and rebound DNS names away from the admin
// API, which has no token by default: it answers a request it refuses and
// reports that it did, before any other layer sees it. For every path under /__sandbox/
// except the health check and the CA certificate (public, read-only):
//
//   - the Host must name this sandbox (hostPolicy), else 403: a page whose
//     DNS name was rebound to the sandbox would otherwise read its data;
//   - a request from another site (Sec-Fetch-Site: cross-site, or an Origin
//     whose host is not one the sandbox answers to) is refused with 403,
//     except a browser opening the console page itself from a link.
//
// The third defence, JSON bodies on POST, PUT and PATCH (and on a DELETE
// that has a body), is Only's: it comes after the 405 and the 401 so
// that those answers stay the first a caller sees.
func (a *API) Guard(w http.ResponseWriter, r *http.Request) (refused bool) {
	p := path.Clean(r.URL.Path)
	if !strings.HasPrefix(p+"/", adminPrefix) || p == "/__sandbox/health" || p == "/__sandbox/ca.pem" {
		return false
	}
	problem, ok := a.adminRefusal(r, p)
	if ok {
		a.logAdminRefusal(r, problem)
		a.reply.Problem(w, r, problem)
	}
	return ok
}

// adminRefusal returns the problem an admin request p is refused with, if
// any.
func (a *API) adminRefusal(r *http.Request, p string) (reply.Problem, bool) {
	if !a.hosts.allows(r.Host, localAddrOf(r)) {
		return reply.New(http.StatusForbidden, fmt.Sprintf(
			"the admin API answers only to localhost, the listen address, the --public-url host, --tls-host names and --allowed-host names, not to Host %q; "+
				"start the sandbox with --allowed-host (SANDBOX_ALLOWED_HOSTS) naming it if it is really this sandbox's name", a.reply.Redactor.Log(r.Host))), true
	}
	consolePage := strings.HasPrefix(p+"/", consolePath) && (r.Method == http.MethodGet || r.Method == http.MethodHead)
	if !consolePage {
		if site := r.Header.Get("Sec-Fetch-Site"); strings.EqualFold(site, "cross-site") {
			return reply.New(http.StatusForbidden, "the admin API refuses requests from web pages of other sites (Sec-Fetch-Site: cross-site); "+
				"use the console at /__sandbox/ui/, the CLI or a script"), true
		}
		if origin, ok := r.Header["Origin"]; ok && !a.sameSiteOrigin(origin[0], r) {
			return reply.New(http.StatusForbidden, fmt.Sprintf("the admin API refuses requests from web pages of other sites (Origin %q); "+
				"use the console at /__sandbox/ui/, the CLI or a script, or name that host with --allowed-host", a.reply.Redactor.Log(origin[0]))), true
		}
	}
	return reply.Problem{}, false
}

// sameSiteOrigin reports whether an Origin header names a page the sandbox
// serves or a host it answers to. "null" (a sandboxed frame, a file:// page)
// is never one.
func (a *API) sameSiteOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return a.hosts.allows(u.Host, localAddrOf(r))
}

// localAddrOf is the address the request's connection arrived on; nil
// when the handler is called without a server (a test recorder).
func localAddrOf(r *http.Request) net.Addr {
	a, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return a
}

// stateChanging reports whether method may change the sandbox.
func stateChanging(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return false
	}
	return true
}

// adminJSONHint says what every state-changing admin call must send.
const adminJSONHint = "state-changing admin calls need Content-Type: application/json and a JSON object body ({} when the call takes no parameters); a DELETE may instead have no body at all"

// checkAdminContentType accepts application/json with any parameters
// (charset=utf-8); the media type is case-insensitive (RFC 9110).
func checkAdminContentType(header string) error {
	if strings.TrimSpace(header) == "" {
		return fmt.Errorf("%s; the request had no Content-Type", adminJSONHint)
	}
	mediaType, _, err := mime.ParseMediaType(header)
	if err != nil && mediaType == "" {
		return fmt.Errorf("%s; %q is not a valid media type", adminJSONHint, header)
	}
	if mediaType != "application/json" {
		return fmt.Errorf("%s, not %q", adminJSONHint, mediaType)
	}
	return nil
}

// logAdminRefusal writes the line about a refused admin request, at most
// one a second per source address (a refused caller is nobody the sandbox
// knows), with a count of the lines held back. Every value is the
// caller's, so each is redacted and cut as the journal would.
func (a *API) logAdminRefusal(r *http.Request, refused reply.Problem) {
	ok, suppressed := a.refusals.Allow("admin " + logthrottle.Source(r))
	if !ok {
		return
	}
	x := a.reply.Redactor
	attrs := []any{"method", x.Log(r.Method), "path", x.LogPath(r.URL.Path), "host", x.Log(r.Host),
		"origin", x.Log(r.Header.Get("Origin")), "sec_fetch_site", x.Log(r.Header.Get("Sec-Fetch-Site")),
		"status", refused.Status, "request_id", reply.RequestID(r)}
	if suppressed > 0 {
		attrs = append(attrs, "suppressed", suppressed)
	}
	a.log.Warn("admin request refused", attrs...)
}
