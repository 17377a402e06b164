package contractdoc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/yaml"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// maxDocumentBytes bounds a contract document.
const maxDocumentBytes = 8 << 20

// Contract is a loaded, checked contract document.
type Contract struct {
	document []byte // the document as JSON, as supplied (YAML converted, 3.1 translated to 3.0)
	under    string // the path of the first servers URL
	ops      map[Operation]*Op
	builtin  bool   // the document is the built-in one
	from31   bool   // the document was OpenAPI 3.1, translated (see translate31)
	served   []byte // the document as served, before its addresses are set (see Served)
}

// Op is one referral operation the contract describes.
type Op struct {
	Operation Operation
	// Method and Path are the operation as the document writes it.
	Method, Path string
	// Pointer is the JSON Pointer of the operation object.
	Pointer string
	// Request is the schema of a submission (create operations only).
	Request *openapi3.Schema
	// RequestMembers maps the sandbox members a submission carries
	// (trialId, externalSourceId) to the name the request schema gives them.
	RequestMembers map[Member]string
	// Response shapes the success answer: a record, or a page of them.
	Response *Shape
	// Items, for list operations, is the page member holding the records;
	// Item shapes each of them.
	Items string
	Item  *Shape
	// fingerprint is the operation's schemas with every reference inlined,
	// for comparison with the built-in document.
	fingerprint string
}

// Shape is a response object schema: which members it declares and which
// of them the sandbox owns.
type Shape struct {
	// Owned maps a declared member name to the sandbox member it holds.
	Owned map[string]Member
	// root shapes the record's members, nested ones included.
	root *node
}

// LoadFile reads and loads the contract in path (JSON or YAML).
func LoadFile(path string) (*Contract, error) {
	return LoadFileContext(context.Background(), path)
}

// LoadFileContext is LoadFile, stopped with ctx's error when ctx ends
// before the load does.
func LoadFileContext(ctx context.Context, path string) (*Contract, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxDocumentBytes+1)); err != nil {
		return nil, fmt.Errorf("contract %s: %w", path, err)
	}
	if buf.Len() > maxDocumentBytes {
		return nil, fmt.Errorf("contract %s: larger than %d bytes", path, maxDocumentBytes)
	}
	c, err := LoadContext(ctx, buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("contract %s: %w", path, err)
	}
	return c, nil
}

// Load loads and checks a contract document (JSON or YAML, OpenAPI 3.0 or
// 3.1; a 3.1 document is translated to 3.0, see translate31).
func Load(data []byte) (*Contract, error) {
	return LoadContext(context.Background(), data)
}

// LoadContext is Load, stopped with ctx's error when ctx ends before the
// load does: a load is linear in the document, but a large one takes a
// while, and a process told to stop should not finish it first.
func LoadContext(ctx context.Context, data []byte) (*Contract, error) {
	stopped := func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("loading stopped: %w", err)
		}
		return nil
	}
	doc := data
	if trimmed := bytes.TrimSpace(data); len(trimmed) == 0 || trimmed[0] != '{' {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("neither JSON nor YAML: %w", err)
		}
		doc = j
	}
	var tree any
	if err := json.Unmarshal(doc, &tree); err != nil {
		return nil, fmt.Errorf("not a JSON document: %w", err)
	}
	if ptr, ok := externalRef(tree, ""); ok {
		return nil, fmt.Errorf("%s: only references inside the document (#/...) are supported", ptr)
	}
	from31 := isOpenAPI31(tree)
	if from31 {
		var err error
		if doc, err = translated(doc); err != nil {
			return nil, err
		}
	}
	if err := stopped(); err != nil {
		return nil, err
	}
	t, err := loadChecked(ctx, doc)
	if err != nil {
		return nil, err
	}
	if err := stopped(); err != nil {
		return nil, err
	}
	c := &Contract{document: bytes.Clone(doc), ops: map[Operation]*Op{}, from31: from31}
	if len(t.Servers) > 0 {
		if u, err := url.Parse(t.Servers[0].URL); err == nil {
			c.under = u.Path
		}
	}
	if err := c.collect(newChecker(ctx), t); err != nil {
		return nil, err
	}
	if len(c.ops) == 0 {
		return nil, errors.New("/paths: the document describes none of the referral operations (POST and GET /referrals/, GET /referrals/{trial_id}/{outcomes_id}, POST and GET /referrals/qualified, GET /referrals/qualified/{external_source_id}, from the root under /api/v1 or under a servers URL ending in /api/v1)")
	}
	if c.builtin = bytes.Equal(c.document, openapi.Document()) || sameAsBuiltin(c.document); !c.builtin {
		if c.served, err = merge(c); err != nil {
			return nil, fmt.Errorf("merge the sandbox's additions: %w", err)
		}
		if err := stopped(); err != nil {
			return nil, err
		}
		if err := checkServed(ctx, c.served); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// translated is the OpenAPI 3.0 translation of a 3.1 document, its
// numbers kept as written.
func translated(doc []byte) ([]byte, error) {
	var tree map[string]any
	if err := decode(doc, &tree); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if err := translate31(tree); err != nil {
		return nil, err
	}
	return json.Marshal(tree)
}

// loadChecked loads an OpenAPI 3.0 document and validates it.
func loadChecked(ctx context.Context, doc []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = false
	t, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("not an OpenAPI document: %w", err)
	}
	if !strings.HasPrefix(t.OpenAPI, "3.0.") {
		return nil, fmt.Errorf("/openapi: version %q is not supported: the sandbox takes OpenAPI 3.0 and 3.1 documents", t.OpenAPI)
	}
	if err := checkValidationCost(t); err != nil {
		return nil, err
	}
	if err := t.Validate(ctx); err != nil {
		return nil, fmt.Errorf("not a valid OpenAPI 3.0 document: %w", err)
	}
	return t, nil
}

// collect finds the referral operations and checks their schemas.
func (c *Contract) collect(ck *checker, t *openapi3.T) error {
	paths := t.Paths.InMatchingOrder()
	sort.Strings(paths) // one fixed order, so an alias path never wins by chance
	for _, p := range paths {
		tmpl, ok := template(p, c.under)
		if !ok {
			continue
		}
		item := t.Paths.Value(p)
		for _, r := range routes {
			if r.path != tmpl || c.ops[r.op] != nil {
				continue
			}
			o := item.GetOperation(r.method)
			if o == nil {
				continue
			}
			ptr := "/paths/" + escape(p) + "/" + strings.ToLower(r.method)
			op, err := newOp(ck, r, p, ptr, o)
			if err != nil {
				return err
			}
			c.ops[r.op] = op
		}
	}
	return nil
}

// Op returns the operation the contract describes, or nil.
func (c *Contract) Op(o Operation) *Op {
	if c == nil {
		return nil
	}
	return c.ops[o]
}

// Document returns the document as JSON, as supplied (a 3.1 document in
// its 3.0 translation).
func (c *Contract) Document() []byte { return bytes.Clone(c.document) }

// TranslatedFrom31 reports whether the supplied document was OpenAPI 3.1,
// which the sandbox checks, shapes and serves as its 3.0 translation.
func (c *Contract) TranslatedFrom31() bool { return c.from31 }

// PathsUnderServer reports whether the document writes its paths under a
// servers URL ending in /api/v1 rather than from the root.
func (c *Contract) PathsUnderServer() bool {
	return strings.HasSuffix(strings.TrimSuffix(c.under, "/"), apiBase)
}

func newOp(ck *checker, r route, path, ptr string, o *openapi3.Operation) (*Op, error) {
	op := &Op{Operation: r.op, Method: r.method, Path: path, Pointer: ptr}
	var prints []string
	if r.method == http.MethodPost {
		if o.RequestBody == nil || o.RequestBody.Value == nil {
			return nil, fmt.Errorf("%s/requestBody: a submission operation needs a request body", ptr)
		}
		mt := o.RequestBody.Value.Content.Get("application/json")
		if mt == nil || mt.Schema == nil {
			return nil, fmt.Errorf("%s/requestBody/content: needs an application/json schema", ptr)
		}
		at := refPointer(mt.Schema, ptr+"/requestBody/content/application~1json/schema")
		fp, err := ck.check(mt.Schema, at)
		if err != nil {
			return nil, err
		}
		prints = append(prints, fp)
		op.Request = mt.Schema.Value
		op.RequestMembers = map[Member]string{}
		for name, prop := range properties(mt.Schema.Value) {
			if m, ok := memberOf(name, prop); ok && (m == TrialID || m == ExternalSourceID) {
				op.RequestMembers[m] = name
			}
		}
		switch {
		case r.op == CreateReferral && op.RequestMembers[TrialID] == "":
			return nil, fmt.Errorf("%s: the request schema needs a trialId member (or one annotated %s: trialId): the record's address names its trial", at, Annotation)
		case r.op == CreateQualified && op.RequestMembers[ExternalSourceID] == "":
			return nil, fmt.Errorf("%s: the request schema needs an externalSourceId member (or one annotated %s: externalSourceId): it is the record's address", at, Annotation)
		}
	}
	resp, at := successSchema(o, ptr)
	if resp != nil {
		fp, err := ck.check(resp, at)
		if err != nil {
			return nil, err
		}
		prints = append(prints, fp)
		if r.op == ListReferrals || r.op == ListQualified {
			for name, prop := range properties(resp.Value) {
				if prop.Value.Type.Is("array") && prop.Value.Items != nil {
					op.Items = name
					if op.Item, err = newShape(prop.Value.Items.Value, at+"/properties/"+escape(name)+"/items", ""); err != nil {
						return nil, err
					}
					break
				}
			}
			if op.Items == "" {
				return nil, fmt.Errorf("%s: a list answer needs an array member holding the records", at)
			}
		}
		if op.Response, err = newShape(resp.Value, at, op.Items); err != nil {
			return nil, err
		}
	}
	op.fingerprint = strings.Join(prints, "\n")
	return op, nil
}

// successSchema is the schema of the operation's 201 or 200 JSON answer.
func successSchema(o *openapi3.Operation, ptr string) (*openapi3.SchemaRef, string) {
	for _, code := range []string{"201", "200"} {
		r := o.Responses.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		if mt := r.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			return mt.Schema, refPointer(mt.Schema, ptr+"/responses/"+code+"/content/application~1json/schema")
		}
	}
	return nil, ""
}

// newShape builds the shape of a record, or of a page whose records
// (shaped by their own Shape) are its member records.
func newShape(s *openapi3.Schema, at, records string) (*Shape, error) {
	b := &shaper{built: map[shapeKey]*node{}}
	root, err := b.newNode(s, at, 0, false, records)
	if err != nil {
		return nil, err
	}
	if root == nil || root.items != nil { // declares no member: every one as sent
		root = &node{open: true}
	}
	// The root is changed below; a node may be shared, so the root is a copy.
	root = &node{fields: maps.Clone(root.fields), owned: maps.Clone(root.owned), open: root.open, holds: root.holds, placed: root.placed}
	if root.fields == nil {
		root.fields = map[string]*node{}
	}
	if root.owned == nil {
		root.owned = map[string]Member{}
	}
	sh := &Shape{Owned: root.owned, root: root}
	// At the top, a member is also owned by its name alone.
	for name, prop := range shapeProperties(s) {
		if m, ok := memberOf(name, prop); ok {
			root.owned[name] = m
			delete(root.fields, name)
		}
	}
	return sh, nil
}

// memberOf tells which sandbox member a property holds: its annotation, or
// its name.
func memberOf(name string, prop *openapi3.SchemaRef) (Member, bool) {
	if v, ok := prop.Value.Extensions[Annotation].(string); ok && knownMember(v) {
		return Member(v), true
	}
	return Member(name), knownMember(name)
}

// properties merges the properties an object schema declares itself and
// through allOf.
func properties(s *openapi3.Schema) map[string]*openapi3.SchemaRef {
	out := map[string]*openapi3.SchemaRef{}
	for _, part := range s.AllOf {
		for k, v := range properties(part.Value) {
			out[k] = v
		}
	}
	for k, v := range s.Properties {
		out[k] = v
	}
	return out
}

// refPointer is where a schema lives: its reference target, or at.
func refPointer(s *openapi3.SchemaRef, at string) string {
	if strings.HasPrefix(s.Ref, "#") {
		return s.Ref[1:]
	}
	return at
}

// escape is a JSON Pointer reference token (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// externalRef finds a $ref that leaves the document.
func externalRef(v any, at string) (string, bool) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ref, ok := v[k].(string); k == "$ref" && ok && !strings.HasPrefix(ref, "#") {
				return at + "/$ref", true
			}
			if p, ok := externalRef(v[k], at+"/"+escape(k)); ok {
				return p, true
			}
		}
	case []any:
		for i, e := range v {
			if p, ok := externalRef(e, fmt.Sprintf("%s/%d", at, i)); ok {
				return p, true
			}
		}
	}
	return "", false
}
