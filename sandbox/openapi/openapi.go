// Package openapi holds the OpenAPI 3.0.3 document of the referrals sandbox:
// the referrals API, its health check, the identity provider in front of it
// and the sandbox's own additions. The document is hand-written JSON
// (openapi.json, next to this file) and is the contract the server is held
// to: the tests of package contract validate real requests and responses
// against it.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package openapi

import (
	"bytes"
	_ "embed"
)

// ContentType is the media type the document is served with.
const ContentType = "application/json"

// document is the embedded openapi.json. It is never written to; Document
// hands out copies so no caller can change what the next caller sees.
//
//go:embed openapi.json
var document []byte

// Document returns the OpenAPI document as pretty-printed JSON. Each call
// returns a fresh copy (about 90 KiB), so the caller may keep or modify it.
func Document() []byte {
	return bytes.Clone(document)
}
