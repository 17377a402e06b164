package contractdoc

import "strings"

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
