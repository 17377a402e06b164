package collections

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Vars are the collection variables and their default values: where the
// sandbox is and which client the collection authenticates as.
type Vars struct {
	// AuthURL is the identity provider's authority (root URL + /tenant).
	AuthURL string
	// BaseURL is the API's base address (root URL + /api/v1).
	BaseURL string
	// RootURL is the sandbox's root, for the ping, the health check and
	// the tenant-less identity paths.
	RootURL      string
	ClientID     string
	ClientSecret string
	Scope        string
}

// list is the variables in the order the collections show them.
func (v Vars) list() [][2]string {
	return [][2]string{
		{"auth_url", v.AuthURL}, {"base_url", v.BaseURL}, {"root_url", v.RootURL},
		{"client_id", v.ClientID}, {"client_secret", v.ClientSecret}, {"scope", v.Scope},
	}
}

// tokenURL is the token endpoint, in collection variables.
const tokenURL = "{{auth_url}}/oauth2/v2.0/token"

// request is one request of a collection, in neither tool's format.
type request struct {
	folder  string
	name    string
	method  string
	url     string
	headers [][2]string
	json    string      // a JSON body, indented; "" for none
	form    [][2]string // a form body
	// auth is true when the request sends the collection's token.
	auth   bool
	status int
	// wantHeader names a response header the request asserts.
	wantHeader string
	// unique are variables set to a new value before the request: ids the
	// partner chooses, which must differ from one run to the next.
	unique []string
	// captures are variables set from the answer's JSON fields, for the
	// requests that read what this one created.
	captures [][2]string // variable, field
	// example is the success answer the document describes, saved with
	// the request.
	example responseExample
}

// Drills is the folder of failure drills.
const Drills = "Failure drills"

// uniqueFields are the request fields a partner chooses and the API refuses
// twice (409): each run sets a new value.
var uniqueFields = map[string]bool{"externalSourceId": true}

// plan builds the requests for every operation of the document, then the
// drills.
func plan(d *document) ([]request, error) {
	ops, err := d.operations()
	if err != nil {
		return nil, err
	}
	pathParams := map[string]bool{}
	for _, op := range ops {
		for _, p := range op.params {
			if p.In == "path" {
				pathParams[p.Name] = true
			}
		}
	}
	captured := map[string]bool{} // path parameters some earlier request sets
	var out []request
	for _, op := range ops {
		r, err := d.request(op, pathParams, captured)
		if err != nil {
			return nil, err
		}
		for _, c := range r.captures {
			captured[c[0]] = true
		}
		out = append(out, r)
	}
	return append(out, drills()...), nil
}

func (d *document) request(op apiOperation, pathParams, captured map[string]bool) (request, error) {
	status, err := op.successStatus()
	if err != nil {
		return request{}, err
	}
	r := request{folder: "Other", name: op.Summary, method: op.method, status: status, auth: true}
	if len(op.Tags) > 0 {
		r.folder = op.Tags[0]
	}
	if r.name == "" {
		r.name = op.OperationID
	}
	if op.Security != nil && len(*op.Security) == 0 {
		r.auth = false
	}
	path := op.path
	var query url.Values
	for _, p := range op.params {
		switch p.In {
		case "path":
			value := fmt.Sprint(p.Example)
			if captured[p.Name] {
				value = "{{" + p.Name + "}}"
			}
			if p.Name != "tenant" {
				path = strings.ReplaceAll(path, "{"+p.Name+"}", value)
			}
		case "query":
			if p.Required && p.Example != nil {
				if query == nil {
					query = url.Values{}
				}
				query.Set(p.Name, fmt.Sprint(p.Example))
			}
		}
	}
	r.url = urlOf(path)
	if len(query) > 0 {
		r.url += "?" + query.Encode()
	}
	if op.body != nil {
		if err := d.body(&r, op); err != nil {
			return request{}, fmt.Errorf("%s %s: %w", op.method, op.path, err)
		}
	}
	if r.example, err = d.example(op, status); err != nil {
		return request{}, fmt.Errorf("%s %s: %w", op.method, op.path, err)
	}
	if status == 201 {
		if err := d.capture(&r, op, pathParams); err != nil {
			return request{}, fmt.Errorf("%s %s: %w", op.method, op.path, err)
		}
	}
	return r, nil
}

// urlOf writes a document path with the collection variables: the API's
// under base_url, the identity provider's tenant paths under auth_url.
func urlOf(path string) string {
	switch {
	case strings.HasPrefix(path, "/api/v1/") || path == "/api/v1":
		return "{{base_url}}" + strings.TrimPrefix(path, "/api/v1")
	case strings.HasPrefix(path, "/{tenant}/"):
		return "{{auth_url}}" + strings.TrimPrefix(path, "/{tenant}")
	}
	return "{{root_url}}" + path
}

// body gives r the operation's example body: JSON from the schema's
// example, or the token form with the collection's credentials.
func (d *document) body(r *request, op apiOperation) error {
	if _, ok := op.body.Content["application/x-www-form-urlencoded"]; ok {
		r.form = [][2]string{
			{"grant_type", "client_credentials"}, {"client_id", "{{client_id}}"},
			{"client_secret", "{{client_secret}}"}, {"scope", "{{scope}}"},
		}
		r.headers = append(r.headers, [2]string{"Content-Type", "application/x-www-form-urlencoded"})
		return nil
	}
	content, ok := op.body.Content["application/json"]
	if !ok {
		return fmt.Errorf("no JSON or form body")
	}
	example := content.Example
	if example == nil {
		s, err := d.schema(content.Schema)
		if err != nil {
			return err
		}
		example = s.Example
	}
	obj, ok := example.(map[string]any)
	if !ok {
		return fmt.Errorf("no example object for the request body")
	}
	for field := range obj {
		if uniqueFields[field] {
			v := snake(field)
			obj[field] = "{{" + v + "}}"
			r.unique = append(r.unique, v)
		}
	}
	data, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return err
	}
	r.json = string(data)
	r.headers = append(r.headers, [2]string{"Content-Type", "application/json"})
	return nil
}

// capture makes a creating request keep the ids of what it created, under
// the names of the path parameters that read it back (outcomesId becomes
// outcomes_id).
func (d *document) capture(r *request, op apiOperation, pathParams map[string]bool) error {
	resp, found, err := d.response(op, 201)
	if !found || err != nil {
		return err
	}
	s, err := d.schema(resp.Content["application/json"].Schema)
	if err != nil {
		return err
	}
	for field := range s.Properties {
		if pathParams[snake(field)] {
			r.captures = append(r.captures, [2]string{snake(field), field})
		}
	}
	sort.Slice(r.captures, func(i, j int) bool { return r.captures[i][0] < r.captures[j][0] })
	return nil
}

// snake turns a JSON field name into the path parameter's (outcomesId:
// outcomes_id).
func snake(field string) string {
	var b strings.Builder
	for _, c := range field {
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}
