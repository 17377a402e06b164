// Package lazyregexp compiles a package's regular expressions when they
// are first used instead of when the package is initialized. Every
// package linked into the binary is initialized at every start, whatever
// the subcommand, so a regular expression that a start does not use (one
// for a request header, an upstream recording, the drift command) would
// otherwise be compiled, and its program allocated, before the first
// request; one with a bounded repetition such as {0,63} compiles to
// hundreds of instructions.
package lazyregexp

import (
	"regexp"
	"sync"
)

// New returns a function that compiles pattern on its first call and
// returns the same *regexp.Regexp on every call, from any goroutine. Like
// regexp.MustCompile, it panics when pattern does not compile: at the
// first call rather than at start, so every pattern must be used by a
// test.
func New(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
