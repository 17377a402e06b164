package collections

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// maxExampleDepth bounds how deep an example is built from nested
// schemas: a self-referencing schema would otherwise never end.
const maxExampleDepth = 8

// responseExample is the saved answer a request carries: what the
// operation's success response looks like, so that Postman's docs and mock
// servers show it.
type responseExample struct {
	contentType string
	body        string
}

// example returns the operation's success answer: the document's example
// of it, or one built from its schema's property examples, types and
// enums. A response without content (204) has an empty body.
func (d *document) example(op apiOperation, status int) (responseExample, error) {
	resp, found, err := d.response(op, status)
	switch {
	case !found:
		return responseExample{}, fmt.Errorf("no %d response", status)
	case err != nil:
		return responseExample{}, err
	}
	if len(resp.Content) == 0 {
		return responseExample{}, nil
	}
	contentType := "application/json"
	content, ok := resp.Content[contentType]
	if !ok {
		for ct, c := range resp.Content {
			contentType, content = ct, c
			break
		}
	}
	value := content.Example
	if value == nil {
		v, err := d.schemaExample(content.Schema, 0)
		if err != nil {
			return responseExample{}, fmt.Errorf("%d response: %w", status, err)
		}
		value = v
	}
	if s, ok := value.(string); ok && !strings.Contains(contentType, "json") {
		return responseExample{contentType: contentType, body: s}, nil
	}
	body, err := json.MarshalIndent(value, "", "  ")
	if err != nil {
		return responseExample{}, err
	}
	return responseExample{contentType: contentType, body: string(body)}, nil
}

// exampleSchema is what an example is built from.
type exampleSchema struct {
	Ref        string                     `json:"$ref"`
	Example    any                        `json:"example"`
	Type       string                     `json:"type"`
	Format     string                     `json:"format"`
	Enum       []any                      `json:"enum"`
	Properties map[string]json.RawMessage `json:"properties"`
	Items      json.RawMessage            `json:"items"`
	OneOf      []json.RawMessage          `json:"oneOf"`
	AnyOf      []json.RawMessage          `json:"anyOf"`
	AllOf      []json.RawMessage          `json:"allOf"`
}

// schemaExample builds an example value of the schema raw.
func (d *document) schemaExample(raw json.RawMessage, depth int) (any, error) {
	if len(raw) == 0 || depth > maxExampleDepth {
		return nil, nil
	}
	var s exampleSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if s.Ref != "" {
		target, err := component(d.Components.Schemas, s.Ref, "schemas", "schema")
		if err != nil {
			return nil, err
		}
		return d.schemaExample(target, depth+1)
	}
	switch {
	case s.Example != nil:
		return s.Example, nil
	case len(s.Enum) > 0:
		return s.Enum[0], nil
	case len(s.OneOf) > 0:
		return d.schemaExample(s.OneOf[0], depth+1)
	case len(s.AnyOf) > 0:
		return d.schemaExample(s.AnyOf[0], depth+1)
	case len(s.AllOf) > 0:
		merged := map[string]any{}
		for _, part := range s.AllOf {
			v, err := d.schemaExample(part, depth+1)
			if err != nil {
				return nil, err
			}
			if obj, ok := v.(map[string]any); ok {
				for k, x := range obj {
					merged[k] = x
				}
			}
		}
		return merged, nil
	}
	switch s.Type {
	case "array":
		item, err := d.schemaExample(s.Items, depth+1)
		if err != nil || item == nil {
			return []any{}, err
		}
		return []any{item}, nil
	case "string":
		return stringExample(s.Format), nil
	case "integer", "number":
		return 0, nil
	case "boolean":
		return true, nil
	}
	obj := map[string]any{}
	for name, prop := range s.Properties {
		v, err := d.schemaExample(prop, depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		obj[name] = v
	}
	return obj, nil
}

// stringExample is a string of the format.
func stringExample(format string) string {
	switch format {
	case "date-time":
		return "2026-01-15T09:30:00Z"
	case "date":
		return "2026-01-15"
	case "uuid":
		return "3fa85f64-5717-4562-b3fc-2c963f66afa6"
	case "uri", "url":
		return "https://example.com/"
	case "email":
		return "user@example.com"
	}
	return "string"
}

// postmanResponse is a saved example answer of a Postman request.
type postmanResponse struct {
	Name            string            `json:"name"`
	OriginalRequest *postmanRequest   `json:"originalRequest"`
	Status          string            `json:"status"`
	Code            int               `json:"code"`
	PreviewLanguage string            `json:"_postman_previewlanguage"`
	Header          []postmanVariable `json:"header"`
	Cookie          []any             `json:"cookie"`
	Body            string            `json:"body"`
}

// postmanResponseOf is r's saved example, answering req.
func postmanResponseOf(r request, req *postmanRequest) postmanResponse {
	resp := postmanResponse{
		Name: fmt.Sprintf("%d %s", r.status, http.StatusText(r.status)), OriginalRequest: req,
		Status: http.StatusText(r.status), Code: r.status, PreviewLanguage: "text",
		Header: []postmanVariable{}, Cookie: []any{}, Body: r.example.body,
	}
	if r.example.contentType != "" {
		resp.Header = append(resp.Header, postmanVariable{Key: "Content-Type", Value: r.example.contentType})
		if strings.Contains(r.example.contentType, "json") {
			resp.PreviewLanguage = "json"
		}
	}
	return resp
}
