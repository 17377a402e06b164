// Package drift compares the sandbox with the real referrals service (the
// "upstream"): it sends one set of probes to both and reports every way the
// answers differ in form (status codes, headers, JSON shapes, the token
// response), never in values.
//
// Files by concept: probes.go (what is sent), pacing.go (how politely),
// shape.go and headers.go (what a body and headers look like), token.go
// (the token response and its JWT), compare.go (one probe's two answers),
// allow.go (accepted differences), run.go (the whole run), output.go and
// junit.go (the four report formats).
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package drift
