package request

import (
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/gorilla/mux"
)

// The router matches the path as the client encoded it and never cleans it
// (mux's SkipClean and UseEncodedPath, set in routes): by default mux
// answers a path with "//", "/./" or "/../" with a 301 to its cleaned form,
// before authentication, and Go's http.Client follows a 301 to a POST with a
// GET, so a partner whose base URL ends in a slash would "submit" a referral
// by reading the list. The sandbox never redirects: such a path is a 404
// naming it, and an encoded "%2F" or ".." inside an id stays part of the id.

// PathVars returns the route's variables decoded: with UseEncodedPath mux
// hands them out as they were encoded ("a%2Fb"), and the handlers want the
// id the client meant ("a/b").
func PathVars(r *http.Request) map[string]string {
	vars := mux.Vars(r)
	out := make(map[string]string, len(vars))
	for k, v := range vars {
		if d, err := url.PathUnescape(v); err == nil {
			v = d
		}
		out[k] = v
	}
	return out
}

// UncleanPathHint explains a 404 for a path that is not in canonical form,
// naming the path the client probably meant; "" for a clean path.
func UncleanPathHint(escaped string) string {
	cleaned := path.Clean(escaped)
	if strings.HasSuffix(escaped, "/") && cleaned != "/" {
		cleaned += "/"
	}
	if cleaned == escaped {
		return ""
	}
	return "; the path has an empty (//) or dot (. or ..) segment, which the sandbox never cleans or redirects (a redirect would turn a POST into a GET): did you mean " + cleaned + "?"
}
