package openapi

import (
	"bytes"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// Served can only put the real addresses in if the embedded document names
// each default address exactly once, where Served expects it.
func TestServedReplacesServerAndTokenURL(t *testing.T) {
	for _, def := range []string{DefaultServerURL, DefaultTokenURL} {
		if n := bytes.Count(document, quoted(def)); n != 1 {
			t.Fatalf("the document names %q %d times, want once", def, n)
		}
	}
	const (
		server = `https://sandbox.example:9443`
		token  = `https://sandbox.example:9443/00000000-0000-4000-8000-000000000001/oauth2/v2.0/token`
	)
	doc, err := openapi3.NewLoader().LoadFromData(Served(server, token))
	if err != nil {
		t.Fatalf("load the served document: %v", err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("the served document is invalid: %v", err)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != server {
		t.Errorf("servers %v, want exactly %s", serverURLs(doc.Servers), server)
	}
	if got := doc.Components.SecuritySchemes["oauth2"].Value.Flows.ClientCredentials.TokenURL; got != token {
		t.Errorf("tokenUrl %q, want %q", got, token)
	}
	if !bytes.Equal(Document(), document) {
		t.Error("Served changed the embedded document")
	}
}
