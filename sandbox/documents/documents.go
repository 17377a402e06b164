// Package documents serves what a partner's tooling fetches before it has
// credentials, none of it holding data: the API's OpenAPI document (the
// built-in one, or the --contract document that replaces it), the admin
// API's OpenAPI document and the local CA's certificate. Each document
// names the address it was fetched at (or --public-url), as the identity
// provider's discovery document does.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package documents

import (
	"fmt"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// Config is what the documents are served from.
type Config struct {
	// Provider names the base URL and the token endpoint a request came
	// in through.
	Provider *idp.Provider
	// Contract, when set, is served in place of the built-in API document.
	Contract *contractdoc.Contract
	// CACertPEM, when set, is the local CA's certificate (--tls).
	CACertPEM []byte
	// Reply answers a document that cannot be built.
	Reply *reply.Replier
}

// Documents serves the sandbox's documents.
type Documents struct{ cfg Config }

// New returns the documents cfg describes.
func New(cfg Config) *Documents { return &Documents{cfg: cfg} }

// HasCA reports whether there is a CA certificate to serve.
func (d *Documents) HasCA() bool { return d.cfg.CACertPEM != nil }

// API serves the API's OpenAPI document without a token, like the health
// check: a partner's tooling reads it before it has credentials. Its
// servers and OAuth2 tokenUrl name the address the request came in on (or
// --public-url). Under --contract the contract is served in its place,
// with the sandbox's additions; the built-in document supplied as a
// contract is served as the default run serves it.
func (d *Documents) API(w http.ResponseWriter, r *http.Request) {
	base := d.cfg.Provider.BaseURL(r)
	tokenURL := d.cfg.Provider.TokenURL(base)
	reply.SetJSONContentType(w.Header())
	if d.cfg.Contract != nil {
		_, _ = w.Write(d.cfg.Contract.Served(base, tokenURL))
		return
	}
	_, _ = w.Write(openapi.Served(base, tokenURL))
}

// Admin serves the admin API's OpenAPI document without the admin token:
// it holds no data, and tooling (and the QA console) reads it first. It
// is a document of its own so that partners' clients generated from the
// API's document never contain the sandbox's controls.
func (d *Documents) Admin(w http.ResponseWriter, r *http.Request) {
	doc, err := openapi.ServedAdmin(d.cfg.Provider.BaseURL(r))
	if err != nil {
		d.cfg.Reply.Fail(w, r, fmt.Errorf("admin OpenAPI document: %w", err))
		return
	}
	w.Header().Set("Content-Type", openapi.ContentType)
	_, _ = w.Write(doc)
}

// CA serves the local CA certificate clients trust (--tls).
func (d *Documents) CA(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/x-pem-file")
	_, _ = w.Write(d.cfg.CACertPEM)
}
