package openapi

import (
	"bytes"
	"encoding/json"
)

// The addresses the embedded document names: the default listen address and
// the default tenant's token endpoint. The sandbox serves the document with
// the addresses a client actually reaches it at, as its discovery document
// does; each must appear exactly once (a test holds the document to it).
const (
	DefaultServerURL = "http://127.0.0.1:8080"
	DefaultTokenURL  = DefaultServerURL + "/5f0a9c4e-3b1d-4e8a-9c27-0d1e2f3a4b5c/oauth2/v2.0/token"
)

// Served returns a copy of the document whose servers entry is serverURL and
// whose OAuth2 tokenUrl is tokenURL, so a client generated from the served
// document calls the sandbox it fetched it from (--addr, --public-url,
// --tenant).
func Served(serverURL, tokenURL string) []byte {
	doc := bytes.Replace(document, quoted(DefaultServerURL), quoted(serverURL), 1)
	return bytes.Replace(doc, quoted(DefaultTokenURL), quoted(tokenURL), 1)
}

// ServedAdmin returns the admin document (AdminDocument) whose servers
// entry is serverURL, like Served.
func ServedAdmin(serverURL string) ([]byte, error) {
	doc, err := AdminDocument()
	if err != nil {
		return nil, err
	}
	return bytes.Replace(doc, quoted(DefaultServerURL), quoted(serverURL), 1), nil
}

// quoted is s as a JSON string, so a URL with unusual characters cannot
// break the document.
func quoted(s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}
