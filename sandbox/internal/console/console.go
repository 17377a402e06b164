// Package console is the sandbox's QA console: one page, its script and its
// style sheet, embedded in the binary and served at /__sandbox/ui/. The page
// drives the admin API from the browser: scenarios, the live request
// journal, records and their statuses, the clock and the conformance report.
// It needs no network beyond the sandbox itself: no CDN, no build step.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"net/http"
	"strings"
	"time"
)

//go:embed assets
var assets embed.FS

// contentSecurityPolicy allows the page only its own files and the sandbox
// it came from: the console shows records with patient names, so no script
// or style from elsewhere may run next to them.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// contentType returns the media type of an asset, or false for a file the
// console does not serve. The types are fixed here rather than taken from
// the mime package, whose answers depend on the machine's mime.types file.
func contentType(name string) (string, bool) {
	switch {
	case strings.HasSuffix(name, ".html"):
		return "text/html; charset=utf-8", true
	case strings.HasSuffix(name, ".js"):
		return "text/javascript; charset=utf-8", true
	case strings.HasSuffix(name, ".css"):
		return "text/css; charset=utf-8", true
	case strings.HasSuffix(name, ".svg"):
		return "image/svg+xml", true
	}
	return "", false
}

// Handler serves the console's files: "/" is the page, "/app.js" and
// "/style.css" what it loads. Mount it with http.StripPrefix. It answers GET
// and HEAD (405 otherwise) and 404 for any other path.
func Handler() http.Handler {
	return http.HandlerFunc(serve)
}

func serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the console answers GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name == "" {
		name = "index.html"
	}
	ct, known := contentType(name)
	if !known || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	data, err := assets.ReadFile("assets/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256(data)
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("ETag", `"`+hex.EncodeToString(sum[:12])+`"`)
	// no-cache, not no-store: the browser revalidates by ETag, so a new
	// binary's console is picked up at once and an unchanged one costs a 304.
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}
