package collections

import (
	"encoding/json"
	"strconv"
)

// PostmanSchema is the Postman collection format the generator writes.
const PostmanSchema = "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"

type postmanCollection struct {
	Info     postmanInfo       `json:"info"`
	Auth     *postmanAuth      `json:"auth,omitempty"`
	Event    []postmanEvent    `json:"event,omitempty"`
	Variable []postmanVariable `json:"variable,omitempty"`
	Item     []postmanItem     `json:"item"`
}

type postmanInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Schema      string `json:"schema"`
}

type postmanAuth struct {
	Type   string            `json:"type"`
	OAuth2 []postmanVariable `json:"oauth2,omitempty"`
}

type postmanEvent struct {
	Listen string        `json:"listen"`
	Script postmanScript `json:"script"`
}

type postmanScript struct {
	Type string   `json:"type"`
	Exec []string `json:"exec"`
}

type postmanVariable struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Type  string `json:"type,omitempty"`
}

type postmanItem struct {
	Name     string          `json:"name"`
	Item     []postmanItem   `json:"item,omitempty"`
	Event    []postmanEvent  `json:"event,omitempty"`
	Request  *postmanRequest `json:"request,omitempty"`
	Response []any           `json:"response,omitempty"`
}

type postmanRequest struct {
	Method string            `json:"method"`
	Header []postmanVariable `json:"header"`
	URL    string            `json:"url"`
	Body   *postmanBody      `json:"body,omitempty"`
	Auth   *postmanAuth      `json:"auth,omitempty"`
}

type postmanBody struct {
	Mode       string            `json:"mode"`
	Raw        string            `json:"raw,omitempty"`
	URLEncoded []postmanVariable `json:"urlencoded,omitempty"`
	Options    any               `json:"options,omitempty"`
}

// postmanRenewal is the collection's pre-request script. Postman's OAuth
// 2.0 auth sends {{access_token}}; the script fetches it with the client
// credentials when there is none and renews it a minute before it expires,
// so the Postman app and newman (which cannot fetch OAuth 2.0 tokens
// itself) run the collection alike.
var postmanRenewal = []string{
	"// Renew the client-credentials token a minute before it expires.",
	"const expiresAt = Number(pm.collectionVariables.get('access_token_expires_at') || 0);",
	"if (!pm.collectionVariables.get('access_token') || Date.now() > expiresAt - 60000) {",
	"  pm.sendRequest({",
	"    url: pm.variables.replaceIn('" + tokenURL + "'),",
	"    method: 'POST',",
	"    header: { 'Content-Type': 'application/x-www-form-urlencoded' },",
	"    body: { mode: 'urlencoded', urlencoded: [",
	"      { key: 'grant_type', value: 'client_credentials' },",
	"      { key: 'client_id', value: pm.variables.replaceIn('{{client_id}}') },",
	"      { key: 'client_secret', value: pm.variables.replaceIn('{{client_secret}}') },",
	"      { key: 'scope', value: pm.variables.replaceIn('{{scope}}') },",
	"    ] },",
	"  }, (err, res) => {",
	"    if (err || res.code !== 200) { throw new Error('token request failed: ' + (err || res.code + ' ' + res.text())); }",
	"    const token = res.json();",
	"    pm.collectionVariables.set('access_token', token.access_token);",
	"    pm.collectionVariables.set('access_token_expires_at', String(Date.now() + token.expires_in * 1000));",
	"  });",
	"}",
}

// Postman writes the requests as a Postman v2.1 collection.
func postman(name, description string, vars Vars, reqs []request) ([]byte, error) {
	c := postmanCollection{
		Info: postmanInfo{Name: name, Description: description, Schema: PostmanSchema},
		Auth: &postmanAuth{Type: "oauth2", OAuth2: []postmanVariable{
			{Key: "grant_type", Value: "client_credentials", Type: "string"},
			{Key: "accessTokenUrl", Value: tokenURL, Type: "string"},
			{Key: "clientId", Value: "{{client_id}}", Type: "string"},
			{Key: "clientSecret", Value: "{{client_secret}}", Type: "string"},
			{Key: "scope", Value: "{{scope}}", Type: "string"},
			{Key: "client_authentication", Value: "body", Type: "string"},
			{Key: "accessToken", Value: "{{access_token}}", Type: "string"},
			{Key: "addTokenTo", Value: "header", Type: "string"},
			{Key: "headerPrefix", Value: "Bearer", Type: "string"},
			{Key: "tokenName", Value: "referrals-sandbox", Type: "string"},
		}},
		Event: []postmanEvent{{Listen: "prerequest", Script: postmanScript{Type: "text/javascript", Exec: postmanRenewal}}},
	}
	for _, v := range vars.list() {
		c.Variable = append(c.Variable, postmanVariable{Key: v[0], Value: v[1], Type: "string"})
	}
	c.Variable = append(c.Variable,
		postmanVariable{Key: "access_token", Value: "", Type: "string"},
		postmanVariable{Key: "access_token_expires_at", Value: "0", Type: "string"})
	folders := map[string]int{}
	for _, r := range reqs {
		i, ok := folders[r.folder]
		if !ok {
			i = len(c.Item)
			folders[r.folder] = i
			c.Item = append(c.Item, postmanItem{Name: r.folder})
		}
		c.Item[i].Item = append(c.Item[i].Item, postmanItemOf(r))
	}
	return json.MarshalIndent(c, "", "  ")
}

func postmanItemOf(r request) postmanItem {
	req := &postmanRequest{Method: r.method, URL: r.url, Header: []postmanVariable{}}
	for _, h := range r.headers {
		req.Header = append(req.Header, postmanVariable{Key: h[0], Value: h[1]})
	}
	if !r.auth {
		req.Auth = &postmanAuth{Type: "noauth"}
	}
	switch {
	case r.json != "":
		req.Body = &postmanBody{Mode: "raw", Raw: r.json, Options: map[string]any{"raw": map[string]string{"language": "json"}}}
	case r.form != nil:
		req.Body = &postmanBody{Mode: "urlencoded"}
		for _, f := range r.form {
			req.Body.URLEncoded = append(req.Body.URLEncoded, postmanVariable{Key: f[0], Value: f[1]})
		}
	}
	item := postmanItem{Name: r.name, Request: req, Response: []any{}}
	if r.example.contentType != "" || r.status == 204 {
		item.Response = append(item.Response, postmanResponseOf(r, req))
	}
	if len(r.unique) > 0 {
		var exec []string
		for _, v := range r.unique {
			exec = append(exec, "pm.collectionVariables.set('"+v+"', 'collection-' + Date.now() + '-' + Math.floor(Math.random() * 1e6));")
		}
		item.Event = append(item.Event, postmanEvent{Listen: "prerequest", Script: postmanScript{Type: "text/javascript", Exec: exec}})
	}
	status := strconv.Itoa(r.status)
	exec := []string{"pm.test('status " + status + "', () => pm.response.to.have.status(" + status + "));"}
	if r.wantHeader != "" {
		exec = append(exec, "pm.test('"+r.wantHeader+" header', () => pm.response.to.have.header('"+r.wantHeader+"'));")
	}
	for _, c := range r.captures {
		exec = append(exec, "if (pm.response.code === "+status+" && typeof pm.response.json()."+c[1]+" === 'string') { pm.collectionVariables.set('"+c[0]+"', pm.response.json()."+c[1]+"); }")
	}
	item.Event = append(item.Event, postmanEvent{Listen: "test", Script: postmanScript{Type: "text/javascript", Exec: exec}})
	return item
}
