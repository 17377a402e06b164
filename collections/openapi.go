// Package collections turns the sandbox's OpenAPI document into the
// collections partner developers work in: Postman (v2.1) and Bruno. Both
// get the client-credentials auth through collection variables, one
// request per operation with an example and its expected status, and a
// folder of failure drills that use the X-Sandbox-* headers.
//
// The document is read with encoding/json rather than an OpenAPI library:
// the generator needs a handful of fields, and the binary that carries it
// is bounded in size (the image is the binary on scratch).
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package collections

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// document is the part of an OpenAPI 3.0 document the generator reads.
type document struct {
	Security   []map[string][]string `json:"security"`
	Components struct {
		Parameters    map[string]parameter       `json:"parameters"`
		RequestBodies map[string]requestBody     `json:"requestBodies"`
		Responses     map[string]json.RawMessage `json:"responses"`
		Schemas       map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
	Paths json.RawMessage `json:"paths"`
}

type pathItem struct {
	Parameters []parameter `json:"parameters"`
}

type operation struct {
	OperationID string                     `json:"operationId"`
	Summary     string                     `json:"summary"`
	Tags        []string                   `json:"tags"`
	Security    *[]map[string][]string     `json:"security"`
	Parameters  []parameter                `json:"parameters"`
	RequestBody *requestBody               `json:"requestBody"`
	Responses   map[string]json.RawMessage `json:"responses"`
}

type parameter struct {
	Ref      string `json:"$ref"`
	Name     string `json:"name"`
	In       string `json:"in"`
	Required bool   `json:"required"`
	Example  any    `json:"example"`
}

type requestBody struct {
	Ref     string               `json:"$ref"`
	Content map[string]mediaType `json:"content"`
}

// response is one response of an operation, by status.
type response struct {
	Ref     string               `json:"$ref"`
	Content map[string]mediaType `json:"content"`
}

// mediaType is a request body's or response's content of one type.
type mediaType struct {
	Schema  json.RawMessage `json:"schema"`
	Example any             `json:"example"`
}

// schema is what the generator reads of a schema: its example and the
// names of its properties.
type schema struct {
	Ref        string                     `json:"$ref"`
	Example    any                        `json:"example"`
	Properties map[string]json.RawMessage `json:"properties"`
}

// apiOperation is one operation of the document, its references resolved.
type apiOperation struct {
	path, method string
	operation
	params []parameter
	body   *requestBody
}

// methods are the operation keys of a path item, in the order requests are
// generated for one path: a POST creates what a GET then reads.
var methods = []string{"post", "put", "patch", "get", "delete"}

// operations lists the document's operations in its path order.
func (d *document) operations() ([]apiOperation, error) {
	paths, err := orderedKeys(d.Paths)
	if err != nil {
		return nil, fmt.Errorf("paths: %w", err)
	}
	var all map[string]map[string]json.RawMessage
	if err := json.Unmarshal(d.Paths, &all); err != nil {
		return nil, fmt.Errorf("paths: %w", err)
	}
	var out []apiOperation
	for _, p := range paths {
		var item pathItem
		if raw, ok := all[p]["parameters"]; ok {
			if err := json.Unmarshal(raw, &item.Parameters); err != nil {
				return nil, fmt.Errorf("%s parameters: %w", p, err)
			}
		}
		for _, m := range methods {
			raw, ok := all[p][m]
			if !ok {
				continue
			}
			op := apiOperation{path: p, method: strings.ToUpper(m)}
			if err := json.Unmarshal(raw, &op.operation); err != nil {
				return nil, fmt.Errorf("%s %s: %w", m, p, err)
			}
			for _, prm := range append(append([]parameter{}, item.Parameters...), op.Parameters...) {
				resolved, err := d.parameter(prm)
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", m, p, err)
				}
				op.params = append(op.params, resolved)
			}
			if op.RequestBody != nil {
				b, err := d.requestBody(*op.RequestBody)
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", m, p, err)
				}
				op.body = &b
			}
			out = append(out, op)
		}
	}
	return out, nil
}

// component is what ref names in one section of the document's
// components (parameters, schemas, ...); noun names such a component in
// the error when ref names none.
func component[T any](section map[string]T, ref, sectionName, noun string) (T, error) {
	name, ok := strings.CutPrefix(ref, "#/components/"+sectionName+"/")
	resolved, found := section[name]
	if !ok || !found {
		return resolved, fmt.Errorf("unresolved %s %s", noun, ref)
	}
	return resolved, nil
}

func (d *document) parameter(p parameter) (parameter, error) {
	if p.Ref == "" {
		return p, nil
	}
	return component(d.Components.Parameters, p.Ref, "parameters", "parameter")
}

func (d *document) requestBody(b requestBody) (requestBody, error) {
	if b.Ref == "" {
		return b, nil
	}
	return component(d.Components.RequestBodies, b.Ref, "requestBodies", "request body")
}

// response is the operation's response of status, its reference
// resolved; found is false when the operation declares none.
func (d *document) response(op apiOperation, status int) (resp response, found bool, err error) {
	raw, ok := op.Responses[fmt.Sprint(status)]
	if !ok {
		return response{}, false, nil
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return response{}, true, err
	}
	if resp.Ref != "" {
		target, err := component(d.Components.Responses, resp.Ref, "responses", "response")
		if err != nil {
			return response{}, true, err
		}
		if err := json.Unmarshal(target, &resp); err != nil {
			return response{}, true, err
		}
	}
	return resp, true, nil
}

// schema resolves raw, a schema or a reference to one.
func (d *document) schema(raw json.RawMessage) (schema, error) {
	var s schema
	if len(raw) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, err
	}
	if s.Ref == "" {
		return s, nil
	}
	target, err := component(d.Components.Schemas, s.Ref, "schemas", "schema")
	if err != nil {
		return s, err
	}
	return d.schema(target)
}

// successStatus is the operation's lowest 2xx response.
func (op apiOperation) successStatus() (int, error) {
	best := 0
	for code := range op.Responses {
		var n int
		if _, err := fmt.Sscanf(code, "%d", &n); err == nil && n >= 200 && n < 300 && (best == 0 || n < best) {
			best = n
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("%s %s declares no 2xx response", op.method, op.path)
	}
	return best, nil
}

// orderedKeys returns the keys of a JSON object in document order.
func orderedKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}
