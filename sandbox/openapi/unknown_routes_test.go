package openapi

import (
	"net/http"
	"strings"
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
					if code == http.StatusMethodNotAllowed && strings.HasSuffix(path, "/oauth2/v2.0/token") {
						// The token endpoint answers a wrong method as Entra
						// does, 400 AADSTS900561 (TokenBadRequest), never 405.
						if op.Responses.Status(code) != nil {
							t.Errorf("%s: %s %s declares 405, which the token endpoint never answers", name, method, path)
						}
						continue
					}
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
