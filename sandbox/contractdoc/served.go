package contractdoc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// The addresses the merged document names until it is served: the
// sandbox's real address and token endpoint replace them per request, as
// openapi.Served does for the built-in document.
const (
	placeholderServer = "https://referrals-sandbox.invalid"
	placeholderToken  = placeholderServer + "/token-endpoint"
)

// Served returns the document a client fetches from /api/v1/openapi.json:
// the supplied document with the sandbox's additions merged in (see
// merge), its servers set to serverURL (+ /api/v1 when the document writes
// its paths under the API's base) and every OAuth2 tokenUrl set to
// tokenURL.
func (c *Contract) Served(serverURL, tokenURL string) []byte {
	if c.builtin {
		return openapi.Served(serverURL, tokenURL)
	}
	doc := bytes.ReplaceAll(c.served, quoted(placeholderToken), quoted(tokenURL))
	open := quoted(serverURL)
	return bytes.ReplaceAll(doc, []byte(`"`+placeholderServer), open[:len(open)-1])
}

func quoted(s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// servedNote names the sandbox's additions in a served contract.
const servedNote = "\n\n## Served by referrals-sandbox\n\n" +
	"The referrals sandbox stands in for this contract's service. It added to the supplied document: " +
	"`servers` (its own address) and every OAuth2 `tokenUrl` (its token endpoint); " +
	"on each operation, the problem responses (`application/problem+json`; a 422 names each failing field by JSON Pointer), " +
	"the headers and the sandbox's request parameters (`X-Request-Id`, `Sandbox-Force-Status`, ...) the document does not declare; " +
	"the operations the document does not describe, in the sandbox's built-in shapes (the identity provider's among them); " +
	"`x-sandbox` on every response member the sandbox fills. " +
	"Components it added keep their built-in names, or take a `sandbox.` prefix where the document uses the name already."

// merge builds the served document: the contract's, plus what the
// built-in document documents of the sandbox that the contract does not.
// The merger's parts are in served_copy.go (components),
// served_operations.go (operations) and served_shapes.go (record schemas).
func merge(c *Contract) ([]byte, error) {
	var ct, bt map[string]any
	if err := decode(c.document, &ct); err != nil {
		return nil, err
	}
	if err := decode(openapi.Document(), &bt); err != nil {
		return nil, err
	}
	m := &merger{ct: ct, bt: bt, targets: map[string]string{}}
	server := placeholderServer
	if c.PathsUnderServer() {
		server += apiBase
	}
	ct["servers"] = []any{map[string]any{"url": server, "description": "The referrals sandbox standing in for this contract's service"}}
	info := object(ct, "info")
	desc, _ := info["description"].(string)
	info["description"] = desc + servedNote

	security := m.security(bt["security"])
	if _, ok := ct["security"]; !ok {
		ct["security"] = security
	}
	cpaths := object(ct, "paths")
	index := map[string]string{} // template -> the contract's path
	for _, p := range slices.Sorted(maps.Keys(cpaths)) {
		if tmpl, ok := template(p, c.under); ok {
			if _, taken := index[tmpl]; !taken {
				index[tmpl] = p
			}
		}
	}
	bpaths := object(bt, "paths")
	for _, bp := range slices.Sorted(maps.Keys(bpaths)) {
		bitem := bpaths[bp].(map[string]any)
		target, root := bp, false
		if tmpl, ok := template(bp, ""); ok {
			if p, found := index[tmpl]; found {
				target = p
			} else if c.PathsUnderServer() {
				target = strings.TrimPrefix(bp, apiBase)
			}
		} else {
			root = true
		}
		citem, exists := cpaths[target].(map[string]any)
		if !exists {
			citem = map[string]any{}
			cpaths[target] = citem
			if root && c.PathsUnderServer() {
				citem["servers"] = []any{map[string]any{"url": placeholderServer}}
			}
		}
		shared, _ := bitem["parameters"].([]any)
		// Built-in path parameters name the interface's identifiers; on the
		// contract's own path, its names are declared instead.
		renamed := exists && target != bp && target != strings.TrimPrefix(bp, apiBase)
		for _, method := range slices.Sorted(maps.Keys(bitem)) {
			bop, ok := bitem[method].(map[string]any)
			if !ok || !isMethod(method) {
				continue
			}
			if cop, ok := citem[method].(map[string]any); ok {
				declared, _ := citem["parameters"].([]any)
				m.addMissing(cop, bop, shared, declared, c.describes(target, method))
				continue
			}
			op := m.copy(bop).(map[string]any)
			if sec, ok := bop["security"]; ok {
				op["security"] = m.security(sec)
			}
			op["parameters"] = m.union(op["parameters"], shared, false)
			if renamed {
				op["parameters"] = m.pathParams(op["parameters"].([]any), target, citem)
			}
			if _, ok := op["security"]; !ok {
				op["security"] = security
			}
			if id, _ := op["operationId"].(string); m.operationIDTaken(id) {
				op["operationId"] = "sandbox_" + id
			}
			citem[method] = op
		}
	}
	m.rewriteTokenURLs()
	m.annotate(c)
	m.reshape(c)
	return json.MarshalIndent(ct, "", "  ")
}

func decode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers kept as written
	return dec.Decode(v)
}

func isMethod(s string) bool {
	return slices.Contains([]string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}, s)
}

// object returns v[key] as an object, creating it when absent.
func object(v map[string]any, key string) map[string]any {
	o, ok := v[key].(map[string]any)
	if !ok {
		o = map[string]any{}
		v[key] = o
	}
	return o
}

// checkServed loads the merged document: a merge the loader refuses is a
// sandbox bug, reported at start rather than served.
func checkServed(ctx context.Context, doc []byte) error {
	if _, err := loadChecked(ctx, doc); err != nil {
		return fmt.Errorf("the served document (the contract with the sandbox's additions) is not valid: %w", err)
	}
	return nil
}
