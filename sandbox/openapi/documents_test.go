package openapi

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// loadAdminDocument parses and validates the served admin document.
func loadAdminDocument(t *testing.T) *openapi3.T {
	t.Helper()
	data, err := AdminDocument()
	if err != nil {
		t.Fatalf("build the admin document: %v", err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("load the admin document: %v", err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("the admin document is not a valid OpenAPI document: %v", err)
	}
	return doc
}

// documents returns both documents by name, for checks that hold for each.
func documents(t *testing.T) map[string]*openapi3.T {
	t.Helper()
	return map[string]*openapi3.T{"openapi.json": loadDocument(t), "admin.json": loadAdminDocument(t)}
}
