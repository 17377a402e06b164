package sandbox

import (
	"net/http"
	"strings"
)

// journaled reports whether requests to this path enter the request journal:
// everything but the sandbox's own admin API, console and health check.
func journaled(r *http.Request) bool {
	return !strings.HasPrefix(r.URL.Path, "/__sandbox/")
}
