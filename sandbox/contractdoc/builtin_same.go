package contractdoc

import (
	"reflect"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// sameAsBuiltin reports whether doc is the built-in document as a sandbox
// serves it (GET /api/v1/openapi.json), perhaps re-encoded or converted to
// YAML: equal to it but for the addresses Served sets, its servers URL and
// OAuth2 tokenUrls. Such a contract is the built-in one, and is served as
// it, not merged with itself.
func sameAsBuiltin(doc []byte) bool {
	var supplied, builtin map[string]any
	if decode(doc, &supplied) != nil || decode(openapi.Document(), &builtin) != nil {
		return false
	}
	for _, d := range []map[string]any{supplied, builtin} {
		if servers, ok := d["servers"].([]any); ok && len(servers) > 0 {
			if s, ok := servers[0].(map[string]any); ok {
				s["url"] = placeholderServer
			}
		}
		schemes, _ := object2(d, "components", "securitySchemes")
		for _, scheme := range schemes {
			placeTokenURLs(scheme)
		}
	}
	return reflect.DeepEqual(supplied, builtin)
}

// object2 is d[a][b] as an object, when there is one.
func object2(d map[string]any, a, b string) (map[string]any, bool) {
	outer, _ := d[a].(map[string]any)
	inner, ok := outer[b].(map[string]any)
	return inner, ok
}
