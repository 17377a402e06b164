package contractdoc

import (
	"slices"
	"strings"
)

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
func (m *merger) addMissing(cop, bop map[string]any, shared, declared []any, byContract bool) {
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
	// A parameter the contract's path item declares for every operation
	// is declared already.
	n := len(declared)
	list, _ := cop["parameters"].([]any)
	merged := m.union(append(slices.Clone(declared), list...), append(slices.Clone(own), shared...), true)
	if len(merged) == n {
		return // none of its own, none added: left as written
	}
	cop["parameters"] = merged[n:]
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
		placeTokenURLs(resolve(m.ct, scheme))
	}
}

// placeTokenURLs sets the tokenUrl of each OAuth2 flow of scheme, a
// security scheme object, to placeholderToken, which Served replaces with
// the sandbox's token endpoint.
func placeTokenURLs(scheme any) {
	s, _ := scheme.(map[string]any)
	flows, _ := s["flows"].(map[string]any)
	for _, f := range flows {
		if f, ok := f.(map[string]any); ok {
			if _, has := f["tokenUrl"]; has {
				f["tokenUrl"] = placeholderToken
			}
		}
	}
}
