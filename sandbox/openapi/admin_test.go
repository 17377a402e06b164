package openapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestAdminDocumentIsValidAndSelfContained(t *testing.T) {
	doc := loadAdminDocument(t)
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
	}
	data, err := AdminDocument()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(externalRef)) {
		t.Error("the served admin document still refers to openapi.json; a client fetching it could not resolve that")
	}
	// Shared components are copied, not redefined: Problem is openapi.json's.
	main := loadDocument(t)
	got, _ := json.Marshal(doc.Components.Schemas["Problem"].Value)
	want, _ := json.Marshal(main.Components.Schemas["Problem"].Value)
	if !bytes.Equal(got, want) {
		t.Errorf("the admin document's Problem differs from openapi.json's:\n%s\n%s", got, want)
	}
}

// admin.json is edited by hand next to openapi.json: the same layout keeps
// diffs small.
func TestAdminSourceIsPrettyPrinted(t *testing.T) {
	var out bytes.Buffer
	if err := json.Indent(&out, adminSource, "", "  "); err != nil {
		t.Fatalf("admin.json is not JSON: %v", err)
	}
	out.WriteByte('\n')
	if !bytes.Equal(bytes.TrimRight(out.Bytes(), "\n"), bytes.TrimRight(adminSource, "\n")) || !bytes.HasSuffix(adminSource, []byte("}\n")) {
		t.Error("admin.json is not laid out as json.Indent with two spaces and a final newline")
	}
}

// No path is in both documents, and every admin path is under /__sandbox/.
func TestDocumentsSplitThePaths(t *testing.T) {
	main, admin := loadDocument(t), loadAdminDocument(t)
	for path := range admin.Paths.Map() {
		if !strings.HasPrefix(path, "/__sandbox/") {
			t.Errorf("admin document path %s is not under /__sandbox/", path)
		}
		if main.Paths.Value(path) != nil {
			t.Errorf("%s is in both documents", path)
		}
	}
}

// Every admin operation is tagged, described and says how it is
// authenticated; state-changing ones declare the 403 and 415 of the admin
// API's request checks.
func TestEveryAdminOperationIsDocumented(t *testing.T) {
	doc := loadAdminDocument(t)
	ids := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			if op.OperationID == "" || ids[op.OperationID] {
				t.Errorf("%s: operationId %q missing or used twice", name, op.OperationID)
			}
			ids[op.OperationID] = true
			if len(op.Tags) != 1 || strings.TrimSpace(op.Summary) == "" || strings.TrimSpace(op.Description) == "" {
				t.Errorf("%s: want one tag, a summary and a description", name)
			}
			public := op.Security != nil && len(*op.Security) == 0
			if !public && op.Responses.Status(401) == nil {
				t.Errorf("%s: needs the admin token but does not declare 401", name)
			}
			if method != "GET" && (op.Responses.Status(403) == nil || op.Responses.Status(415) == nil) {
				t.Errorf("%s: a state-changing operation must declare 403 and 415", name)
			}
		}
	}
}

func TestAdminDocumentRefusesBrokenReferences(t *testing.T) {
	for name, tc := range map[string]struct{ admin, want string }{
		"missing component": {`{"components":{},"paths":{"/x":{"$ref":"openapi.json#/components/schemas/NoSuchThing"}}}`, "does not have"},
		"name taken":        {`{"components":{"schemas":{"Problem":{}}},"paths":{"/x":{"$ref":"openapi.json#/components/schemas/Problem"}}}`, "its own components.schemas.Problem"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := bundle([]byte(tc.admin), document)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
