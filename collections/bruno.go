package collections

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// bruno writes the requests as a Bruno collection: file name (slash
// separated, relative to the collection's directory) to content.
func bruno(name, description string, vars Vars, reqs []request) (map[string][]byte, error) {
	files := map[string][]byte{}
	meta, err := json.MarshalIndent(map[string]any{
		"version": "1", "name": name, "type": "collection", "ignore": []string{"node_modules", ".git"},
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	files["bruno.json"] = append(meta, '\n')

	var b strings.Builder
	b.WriteString("auth {\n  mode: oauth2\n}\n\n")
	// Bruno's own OAuth 2.0: it fetches the token with the client
	// credentials when a request needs one and fetches a new one when it
	// has expired.
	b.WriteString(block("auth:oauth2", [][2]string{
		{"grant_type", "client_credentials"}, {"access_token_url", tokenURL}, {"refresh_token_url", ""},
		{"client_id", "{{client_id}}"}, {"client_secret", "{{client_secret}}"}, {"scope", "{{scope}}"},
		{"credentials_placement", "body"}, {"credentials_id", "credentials"}, {"token_source", "access_token"},
		{"token_placement", "header"}, {"token_header_prefix", "Bearer"},
		{"auto_fetch_token", "true"}, {"auto_refresh_token", "true"},
	}))
	b.WriteString(block("vars:pre-request", vars.list()))
	b.WriteString("docs {\n" + indent(description) + "\n}\n")
	files["collection.bru"] = []byte(b.String())

	folders := map[string]int{}
	seq := map[string]int{}
	for _, r := range reqs {
		if _, ok := folders[r.folder]; !ok {
			folders[r.folder] = len(folders) + 1
			files[path.Join(fileName(r.folder), "folder.bru")] = []byte(fmt.Sprintf("meta {\n  name: %s\n  seq: %d\n}\n", r.folder, folders[r.folder]))
		}
		seq[r.folder]++
		n := seq[r.folder]
		files[path.Join(fileName(r.folder), fmt.Sprintf("%02d %s.bru", n, fileName(r.name)))] = []byte(brunoRequest(r, n))
	}
	return files, nil
}

func brunoRequest(r request, seq int) string {
	var b strings.Builder
	b.WriteString(block("meta", [][2]string{{"name", r.name}, {"type", "http"}, {"seq", strconv.Itoa(seq)}}))
	body := "none"
	switch {
	case r.json != "":
		body = "json"
	case r.form != nil:
		body = "formUrlEncoded"
	}
	auth := "inherit"
	if !r.auth {
		auth = "none"
	}
	b.WriteString(block(strings.ToLower(r.method), [][2]string{{"url", r.url}, {"body", body}, {"auth", auth}}))
	if len(r.headers) > 0 {
		b.WriteString(block("headers", r.headers))
	}
	switch {
	case r.json != "":
		b.WriteString("body:json {\n" + indent(r.json) + "\n}\n\n")
	case r.form != nil:
		b.WriteString(block("body:form-urlencoded", r.form))
	}
	if len(r.unique) > 0 {
		var s []string
		for _, v := range r.unique {
			s = append(s, `bru.setVar("`+v+`", "collection-" + Date.now() + "-" + Math.floor(Math.random() * 1e6));`)
		}
		b.WriteString("script:pre-request {\n" + indent(strings.Join(s, "\n")) + "\n}\n\n")
	}
	if len(r.captures) > 0 {
		var s []string
		for _, c := range r.captures {
			s = append(s, fmt.Sprintf(`if (res.status === %d && typeof res.body.%s === "string") { bru.setVar("%s", res.body.%s); }`, r.status, c[1], c[0], c[1]))
		}
		b.WriteString("script:post-response {\n" + indent(strings.Join(s, "\n")) + "\n}\n\n")
	}
	b.WriteString(block("assert", [][2]string{{"res.status", "eq " + strconv.Itoa(r.status)}}))
	if r.wantHeader != "" {
		h := strings.ToLower(r.wantHeader)
		b.WriteString("tests {\n" + indent(`test("`+r.wantHeader+` header", function () {`+"\n"+`  expect(res.getHeader("`+h+`")).to.be.a("string");`+"\n});") + "\n}\n\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// block writes a Bruno dictionary block.
func block(name string, pairs [][2]string) string {
	var b strings.Builder
	b.WriteString(name + " {\n")
	for _, p := range pairs {
		b.WriteString("  " + p[0] + ": " + p[1] + "\n")
	}
	b.WriteString("}\n\n")
	return b.String()
}

func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n")
}

// fileName makes a request or folder name safe as a file name everywhere.
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '/', '\\', ':', '*', '?', '"', '<', '>', '|':
			return '-'
		}
		return r
	}, name)
}
