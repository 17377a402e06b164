package contractdoc

import (
	"bytes"
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
// under is the path of the contract's servers URL.
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
				m.addMissing(cop, bop, shared, c.describes(target, method))
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

// merger copies parts of the built-in document (bt) into the contract's
// (ct), with the components they refer to.
type merger struct {
	ct, bt  map[string]any
	targets map[string]string // built-in "section/name" -> its name in ct
}

// copy deep-copies a built-in value, rewriting its component references
// to the names they take in the contract's document.
func (m *merger) copy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if ref, ok := e.(string); k == "$ref" && ok {
				out[k] = m.ref(ref)
				continue
			}
			out[k] = m.copy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = m.copy(e)
		}
		return out
	}
	return v
}

// security copies built-in security requirements, which name their
// schemes without a reference: each scheme is copied as a component is.
func (m *merger) security(v any) []any {
	list, _ := v.([]any)
	out := make([]any, 0, len(list))
	for _, req := range list {
		req, _ := req.(map[string]any)
		copied := map[string]any{}
		for scheme, scopes := range req {
			ref := m.ref("#/components/securitySchemes/" + scheme)
			copied[ref[strings.LastIndex(ref, "/")+1:]] = clone(scopes)
		}
		out = append(out, copied)
	}
	return out
}

// clone deep-copies a decoded JSON value.
func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = clone(e)
		}
		return out
	}
	return v
}

// ref is the contract's reference to a built-in component, which it
// schedules for copying under a name the contract does not use.
func (m *merger) ref(ref string) string {
	const prefix = "#/components/"
	parts := strings.SplitN(strings.TrimPrefix(ref, prefix), "/", 2)
	if !strings.HasPrefix(ref, prefix) || len(parts) != 2 {
		return ref
	}
	key := parts[0] + "/" + parts[1]
	if t, ok := m.targets[key]; ok {
		return prefix + parts[0] + "/" + t
	}
	name := parts[1]
	for {
		if _, used := object(object(m.ct, "components"), parts[0])[name]; !used {
			break
		}
		name = "sandbox." + name
	}
	m.targets[key] = name
	section := object(object(m.ct, "components"), parts[0])
	section[name] = nil // reserved: a component that refers to itself finds its name
	section[name] = m.copy(object(object(m.bt, "components"), parts[0])[parts[1]])
	return prefix + parts[0] + "/" + name
}

// contractRefusal is the built-in 422 answer as a contract's submissions
// get it: failing fields named by JSON Pointer. It is added to the
// built-in components copied, as ContractValidationFailed.
func (m *merger) contractRefusal() map[string]any {
	const name = "ContractValidationFailed"
	responses := object(object(m.bt, "components"), "responses")
	if _, ok := responses[name]; !ok {
		r, _ := clone(responses["ValidationFailed"]).(map[string]any)
		if r == nil {
			r = map[string]any{}
		}
		r["description"] = "The body is a JSON object but breaks this contract's request schema, or the sandbox's rules on the members it files the record under (`trialId` must name a trial that accepts referrals; `externalSourceId` must be usable as a path segment). `errors` lists every failing member at once, each `field` a JSON Pointer (for example `/patient/birthDate` or `/tags/2`); nothing is stored. Problem type `urn:referrals-sandbox:problem:validation-failed`."
		if content, ok := r["content"].(map[string]any); ok {
			for _, mt := range content {
				if mt, ok := mt.(map[string]any); ok {
					delete(mt, "example")
				}
			}
		}
		responses[name] = r
	}
	return map[string]any{"$ref": "#/components/responses/" + name}
}

// addMissing adds to a contract operation the built-in operation's
// responses and parameters it does not declare.
func (m *merger) addMissing(cop, bop map[string]any, shared []any, byContract bool) {
	responses := object(cop, "responses")
	for code, r := range bop["responses"].(map[string]any) {
		if _, ok := responses[code]; ok || strings.HasPrefix(code, "2") {
			continue
		}
		if code == "422" && byContract {
			r = m.contractRefusal()
		}
		responses[code] = m.copy(r)
	}
	own, _ := bop["parameters"].([]any)
	cop["parameters"] = m.union(cop["parameters"], append(slices.Clone(own), shared...), true)
}

// union is params plus each of more (built-in, copied) whose name and
// location params does not declare; skipPath leaves out path parameters
// (an operation of the contract names its own).
func (m *merger) union(params any, more []any, skipPath bool) []any {
	list, _ := params.([]any)
	have := map[string]bool{}
	for _, p := range list {
		have[m.paramKey(m.ct, p)] = true
	}
	for _, p := range more {
		if k := m.paramKey(m.bt, p); !have[k] && !(skipPath && strings.HasPrefix(k, "path:")) {
			have[k] = true
			list = append(list, m.copy(p))
		}
	}
	return list
}

// pathParams replaces the path parameters of a built-in operation added to
// the contract's path item at path with the contract's names, unless the
// item declares them for every operation.
func (m *merger) pathParams(params []any, path string, item map[string]any) []any {
	var out []any
	for _, p := range params {
		if !strings.HasPrefix(m.paramKey(m.ct, p), "path:") {
			out = append(out, p)
		}
	}
	shared, _ := item["parameters"].([]any)
	declared := map[string]bool{}
	for _, p := range shared {
		declared[m.paramKey(m.ct, p)] = true
	}
	for _, seg := range strings.Split(path, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok && strings.HasSuffix(name, "}") {
			name = strings.TrimSuffix(name, "}")
			if !declared["path:"+strings.ToLower(name)] {
				out = append(out, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
			}
		}
	}
	return out
}

// paramKey is a parameter's location and name (case folded), its
// reference resolved in doc.
func (m *merger) paramKey(doc map[string]any, p any) string {
	o, _ := resolve(doc, p).(map[string]any)
	in, _ := o["in"].(string)
	name, _ := o["name"].(string)
	return in + ":" + strings.ToLower(name)
}

// resolve follows a local reference in doc.
func resolve(doc map[string]any, v any) any {
	for range 32 {
		o, ok := v.(map[string]any)
		ref, _ := o["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return v
		}
		var at any = doc
		for _, tok := range strings.Split(ref[2:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			obj, _ := at.(map[string]any)
			at = obj[tok]
		}
		v = at
	}
	return v
}

func (m *merger) operationIDTaken(id string) bool {
	for _, item := range object(m.ct, "paths") {
		item, _ := item.(map[string]any)
		for method, op := range item {
			if op, ok := op.(map[string]any); ok && isMethod(method) && op["operationId"] == id {
				return true
			}
		}
	}
	return false
}

// rewriteTokenURLs points every OAuth2 flow's tokenUrl at the sandbox.
func (m *merger) rewriteTokenURLs() {
	for _, scheme := range object(object(m.ct, "components"), "securitySchemes") {
		s, _ := resolve(m.ct, scheme).(map[string]any)
		flows, _ := s["flows"].(map[string]any)
		for _, f := range flows {
			if f, ok := f.(map[string]any); ok {
				if _, has := f["tokenUrl"]; has {
					f["tokenUrl"] = placeholderToken
				}
			}
		}
	}
}

// annotate marks with x-sandbox every member of a described operation's
// answer that the sandbox fills by its name, so the served document says
// which members come from the sandbox.
func (m *merger) annotate(c *Contract) {
	cpaths := object(m.ct, "paths")
	for _, o := range Operations() {
		op := c.Op(o)
		if op == nil {
			continue
		}
		item, _ := cpaths[op.Path].(map[string]any)
		cop, _ := item[strings.ToLower(op.Method)].(map[string]any)
		schema := m.successSchema(cop)
		if schema == nil {
			continue
		}
		m.annotateObject(schema, 0)
		if op.Items != "" {
			if page, ok := m.property(schema, op.Items, 0).(map[string]any); ok {
				if items, ok := resolve(m.ct, page["items"]).(map[string]any); ok {
					m.annotateObject(items, 0)
				}
			}
		}
	}
}

func (m *merger) successSchema(op map[string]any) map[string]any {
	responses, _ := op["responses"].(map[string]any)
	for _, code := range []string{"201", "200"} {
		r, _ := resolve(m.ct, responses[code]).(map[string]any)
		content, _ := r["content"].(map[string]any)
		mt, _ := content["application/json"].(map[string]any)
		if s, ok := resolve(m.ct, mt["schema"]).(map[string]any); ok {
			return s
		}
	}
	return nil
}

// annotateObject annotates the schema's own and allOf members named as
// sandbox members.
func (m *merger) annotateObject(s map[string]any, depth int) {
	if depth > maxExampleDepth {
		return
	}
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		if p, ok := resolve(m.ct, p).(map[string]any); ok && knownMember(name) {
			if _, has := p[Annotation]; !has {
				p[Annotation] = name
			}
		}
	}
	parts, _ := s["allOf"].([]any)
	for _, part := range parts {
		if part, ok := resolve(m.ct, part).(map[string]any); ok {
			m.annotateObject(part, depth+1)
		}
	}
}

// property finds a member's schema in s or its allOf parts.
func (m *merger) property(s map[string]any, name string, depth int) any {
	if depth > maxExampleDepth {
		return nil
	}
	props, _ := s["properties"].(map[string]any)
	if p, ok := props[name]; ok {
		return resolve(m.ct, p)
	}
	parts, _ := s["allOf"].([]any)
	for _, part := range parts {
		if part, ok := resolve(m.ct, part).(map[string]any); ok {
			if p := m.property(part, name, depth+1); p != nil {
				return p
			}
		}
	}
	return nil
}

// checkServed loads the merged document: a merge the loader refuses is a
// sandbox bug, reported at start rather than served.
func checkServed(doc []byte) error {
	if _, err := loadChecked(doc); err != nil {
		return fmt.Errorf("the served document (the contract with the sandbox's additions) is not valid: %w", err)
	}
	return nil
}

// builtinIDs are the built-in operations answering each operation, by
// operationId (the path variants without a trailing slash too).
var builtinIDs = map[Operation][]string{
	CreateReferral: {"submitReferral", "submitReferralWithoutSlash"}, ListReferrals: {"listReferrals", "listReferralsWithoutSlash"},
	GetReferral: {"getReferral"}, CreateQualified: {"submitQualifiedReferral"}, ListQualified: {"listQualifiedReferrals"},
	GetQualified: {"getQualifiedReferral"},
}

// reshape documents the answers of the operations the contract does not
// describe, of a kind of record it shapes: the sandbox answers them with
// records in the contract's shape (see the README), so their success
// answer names the contract's record schema, in the built-in page for a
// listing.
func (m *merger) reshape(c *Contract) {
	kinds := [][3]Operation{{CreateReferral, ListReferrals, GetReferral}, {CreateQualified, ListQualified, GetQualified}}
	pages := map[Operation]string{ListReferrals: "referrals", ListQualified: "qualifiedReferrals"}
	for _, k := range kinds {
		if c.Op(k[0]) == nil && c.Op(k[1]) == nil && c.Op(k[2]) == nil {
			continue
		}
		record := m.recordSchema(c, k)
		if record == nil {
			continue
		}
		for _, o := range k {
			if c.Op(o) != nil {
				continue
			}
			schema, code := record, "200"
			if page, ok := pages[o]; ok {
				schema = map[string]any{"type": "object", "required": []any{page, "nextCursor"}, "properties": map[string]any{
					page:         map[string]any{"type": "array", "items": clone(record)},
					"nextCursor": map[string]any{"type": "string", "nullable": true},
				}}
			} else if o == k[0] {
				code = "201"
			}
			for _, id := range builtinIDs[o] {
				for _, op := range m.operations(id) {
					responses := object(op, "responses")
					r, _ := clone(resolve(m.ct, responses[code])).(map[string]any)
					if r == nil {
						r = map[string]any{}
					}
					r["description"] = "The record in this contract's shape."
					r["content"] = map[string]any{"application/json": map[string]any{"schema": clone(schema)}}
					responses[code] = r
				}
			}
		}
	}
}

// recordSchema is the contract's schema of one record of a kind, as
// written (a reference stays one): its read's, else its submission's
// answer, else its listing's items.
func (m *merger) recordSchema(c *Contract, k [3]Operation) any {
	for _, o := range []Operation{k[2], k[0], k[1]} {
		op := c.Op(o)
		if op == nil {
			continue
		}
		item, _ := object(m.ct, "paths")[op.Path].(map[string]any)
		cop, _ := item[strings.ToLower(op.Method)].(map[string]any)
		responses, _ := cop["responses"].(map[string]any)
		for _, code := range []string{"201", "200"} {
			r, _ := resolve(m.ct, responses[code]).(map[string]any)
			content, _ := r["content"].(map[string]any)
			mt, _ := content["application/json"].(map[string]any)
			schema, ok := mt["schema"]
			if !ok {
				continue
			}
			if o != k[1] {
				return clone(schema)
			}
			if page, ok := resolve(m.ct, schema).(map[string]any); ok {
				if p, ok := m.property(page, op.Items, 0).(map[string]any); ok && p["items"] != nil {
					return clone(p["items"])
				}
			}
		}
	}
	return nil
}

// operations finds the operations with the id (or its sandbox_ rename)
// in the contract's document.
func (m *merger) operations(id string) []map[string]any {
	var out []map[string]any
	for _, item := range object(m.ct, "paths") {
		item, _ := item.(map[string]any)
		for method, op := range item {
			if op, ok := op.(map[string]any); ok && isMethod(method) && (op["operationId"] == id || op["operationId"] == "sandbox_"+id) {
				out = append(out, op)
			}
		}
	}
	return out
}
