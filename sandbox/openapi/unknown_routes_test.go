package openapi

import (
	"net/http"
	"testing"
)

// Every path answers 404 (a path next to it that the router does not
// match) and 405 (another method), so every operation declares both, by
// reference to the one shared response, and a generated client knows their
// shape.
func TestEveryOperationDeclaresNotFoundAndMethodNotAllowed(t *testing.T) {
	want := map[int]string{
		http.StatusNotFound:         "#/components/responses/NotFound",
		http.StatusMethodNotAllowed: "#/components/responses/MethodNotAllowed",
	}
	for name, doc := range documents(t) {
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				for code, ref := range want {
					r := op.Responses.Status(code)
					switch {
					case r == nil:
						t.Errorf("%s: %s %s does not declare %d", name, method, path, code)
					case r.Ref != ref:
						t.Errorf("%s: %s %s declares %d as %q, want a reference to %s", name, method, path, code, r.Ref, ref)
					}
				}
			}
		}
	}
}
