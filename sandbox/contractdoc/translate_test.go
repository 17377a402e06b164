package contractdoc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
)

// TestLoad31RefusesWhatHasNo30Form: every OpenAPI 3.1 construct the 3.0
// translation could not state faithfully refuses the document, naming it
// by its JSON Pointer in the supplied document.
func TestLoad31RefusesWhatHasNo30Form(t *testing.T) {
	const req = `{"$ref":"#/components/schemas/R"}`
	prop := func(schema string) string { // R with trialId and x: schema
		return doc("3.1.0", req, `"R":{"type":"object","properties":{`+trial+`,"x":`+schema+`}}`)
	}
	const x = "/components/schemas/R/properties/x"
	tests := []struct {
		name, doc, want string
	}{
		{"two types", prop(`{"type":["string","integer"]}`), x + "/type: type [string integer] has no OpenAPI 3.0 form"},
		{"two types and null", prop(`{"type":["string","integer","null"]}`), x + "/type:"},
		{"null alone", prop(`{"type":"null"}`), x + "/type:"},
		{"prefixItems", prop(`{"type":"array","prefixItems":[{"type":"string"}]}`), x + "/prefixItems: prefixItems has no OpenAPI 3.0 form"},
		{"if/then/else", prop(`{"type":"object","if":{"required":["a"]},"then":{"required":["b"]}}`), x + "/if:"},
		{"dependentRequired", prop(`{"type":"object","dependentRequired":{"a":["b"]}}`), x + "/dependentRequired:"},
		{"unevaluatedProperties", prop(`{"type":"object","unevaluatedProperties":false}`), x + "/unevaluatedProperties:"},
		{"patternProperties", prop(`{"type":"object","patternProperties":{"^a":{"type":"string"}}}`), x + "/patternProperties:"},
		{"contentEncoding", prop(`{"type":"string","contentEncoding":"base64"}`), x + "/contentEncoding:"},
		{"$dynamicRef", prop(`{"$dynamicRef":"#node"}`), x + "/$dynamicRef:"},
		{"$defs", prop(`{"$defs":{"a":{"type":"string"}},"type":"string"}`), x + "/$defs:"},
		{"contains", prop(`{"type":"array","contains":{"type":"string"}}`), x + "/contains:"},
		{"deep inside items and allOf", prop(`{"type":"array","items":{"allOf":[{"type":"object","propertyNames":{"maxLength":3}}]}}`), x + "/items/allOf/0/propertyNames:"},
		{"in a parameter's schema", strings.Replace(prop(`{"type":"string"}`), `"post":{`, `"parameters":[{"name":"q","in":"query","schema":{"type":"string","contentMediaType":"text/plain"}}],"post":{`, 1),
			"/paths/~1api~1v1~1referrals~1/parameters/0/schema/contentMediaType:"},
		{"false schema", prop(`false`), x + ": the schema false has no OpenAPI 3.0 form"},
		{"nullable is not 3.1", prop(`{"type":"string","nullable":true}`), x + "/nullable: nullable is not an OpenAPI 3.1 keyword"},
		{"const beside enum", prop(`{"const":"a","enum":["a","b"]}`), x + "/const:"},
		{"const null", prop(`{"const":null}`), x + "/const:"},
		{"boolean exclusiveMinimum", prop(`{"type":"number","minimum":1,"exclusiveMinimum":true}`), x + "/exclusiveMinimum: exclusiveMinimum must be a number"},
		{"anyOf, as in 3.0", prop(`{"anyOf":[{"type":"string"},{"type":"integer"}]}`), x + "/anyOf: anyOf is not supported"},
		{"an unknown format, as in 3.0", prop(`{"type":"string","format":"uri"}`), x + "/format:"},
		{"another dialect", strings.Replace(prop(`{"type":"string"}`), `"info":`, `"jsonSchemaDialect":"https://json-schema.org/draft/2020-12/schema","info":`, 1), "/jsonSchemaDialect: dialect"},
		{"mutual TLS", strings.Replace(prop(`{"type":"string"}`), `"schemas":{`, `"securitySchemes":{"mtls":{"type":"mutualTLS"}},"schemas":{`, 1), "/components/securitySchemes/mtls/type: mutualTLS"},
		{"in a response header named like an extension", strings.Replace(prop(`{"type":"string"}`), `"201":{"description":"ok",`, `"201":{"description":"ok","headers":{"x-trace":{"schema":{"type":"array","prefixItems":[{"type":"string"}]}}},`, 1),
			"/paths/~1api~1v1~1referrals~1/post/responses/201/headers/x-trace/schema/prefixItems:"},
		{"in a parameter component named schema", strings.Replace(prop(`{"type":"string"}`), `"schemas":{`, `"parameters":{"schema":{"name":"q","in":"query","schema":{"type":["string","integer"]}}},"schemas":{`, 1),
			"/components/parameters/schema/schema/type:"},
		{"in a callback", strings.Replace(prop(`{"type":"string"}`), `"responses":{"201"`, `"callbacks":{"done":{"{$request.body#/hook}":{"post":{"requestBody":{"content":{"application/json":{"schema":{"if":{}}}}},"responses":{"200":{"description":"ok"}}}}}},"responses":{"201"`, 1),
			"/paths/~1api~1v1~1referrals~1/post/callbacks/done/{$request.body#~1hook}/post/requestBody/content/application~1json/schema/if:"},
		{"in a path item component", `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/api/v1/referrals/":{"$ref":"#/components/pathItems/R"}},
"components":{"pathItems":{"R":{"post":{"requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{` + trial + `,"a":{"type":"object","dependentSchemas":{}}}}}}},"responses":{"201":{"description":"ok"}}}}}}}`,
			"/components/pathItems/R/post/requestBody/content/application~1json/schema/properties/a/dependentSchemas:"},
		{"a path item reference to nothing", `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/api/v1/referrals/":{"$ref":"#/components/pathItems/none"}}}`,
			"/paths/~1api~1v1~1referrals~1/$ref: #/components/pathItems/none names no path item"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := contractdoc.Load([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// TestLoad31TranslatesConstraints: what 3.1 states in its own forms
// (type arrays with "null", const, numeric exclusive bounds, a $ref beside
// constraints) is checked as stated, failures named by JSON Pointer; what
// constrains nothing (examples, $comment, webhooks) loads.
func TestLoad31TranslatesConstraints(t *testing.T) {
	c, err := contractdoc.Load([]byte(doc("3.1.0", `{"type":"object","required":["trialId"],"$comment":"c","examples":[{"trialId":"x"}],"properties":{`+trial+`,
"middle":{"type":["string","null"],"minLength":2},
"kind":{"const":"referral"},
"amount":{"type":["integer","number","null"],"maximum":2},
"sex":{"type":["string","null"],"enum":["F","M"]},
"grade":{"type":["null","string"],"enum":["A",null]},
"score":{"type":"number","exclusiveMinimum":0,"maximum":10,"exclusiveMaximum":12},
"age":{"type":"integer","minimum":18,"exclusiveMinimum":16,"exclusiveMaximum":120},
"code":{"$ref":"#/components/schemas/Code","maxLength":4,"description":"a short code"}}}`,
		`"Code":{"type":"string","pattern":"^[A-Z]+$"}`)))
	if err != nil {
		t.Fatal(err)
	}
	op := c.Op(contractdoc.CreateReferral)
	tests := []struct {
		name, body string
		want       []string // pointers of the failing fields
	}{
		{"valid", `{"trialId":"t","middle":"Jo","kind":"referral","score":0.5,"age":18,"code":"ABCD"}`, nil},
		{"null where the type array allows it", `{"trialId":"t","middle":null}`, nil},
		{"the type's own constraints still hold", `{"trialId":"t","middle":"J"}`, []string{"/middle"}},
		{"a number where the type array says string or null", `{"trialId":"t","middle":3}`, []string{"/middle"}},
		{"const", `{"trialId":"t","kind":"other"}`, []string{"/kind"}},
		{"integer or number is a number", `{"trialId":"t","amount":1.5}`, nil},
		{"integer or number or null, bounded", `{"trialId":"t","amount":"1"}`, []string{"/amount"}},
		{"null refused by an enum without it, whatever the type array says", `{"trialId":"t","sex":null}`, []string{"/sex"}},
		{"null taken by an enum with it", `{"trialId":"t","grade":null}`, nil},
		{"the enum still holds beside null", `{"trialId":"t","grade":"B"}`, []string{"/grade"}},
		{"exclusiveMinimum is exclusive", `{"trialId":"t","score":0}`, []string{"/score"}},
		{"the stricter maximum wins over a looser exclusiveMaximum", `{"trialId":"t","score":11}`, []string{"/score"}},
		{"the stricter minimum wins over a looser exclusiveMinimum", `{"trialId":"t","age":17}`, []string{"/age"}},
		{"exclusiveMaximum is exclusive", `{"trialId":"t","age":120}`, []string{"/age"}},
		{"a constraint beside a $ref holds", `{"trialId":"t","code":"ABCDE"}`, []string{"/code"}},
		{"the $ref's own constraint holds", `{"trialId":"t","code":"abc"}`, []string{"/code"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body map[string]any
			if err := json.Unmarshal([]byte(tc.body), &body); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, fe := range op.Validate(body) {
				got = append(got, fe.Pointer)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("Validate(%s) failed at %v, want %v", tc.body, op.Validate(body), tc.want)
			}
		})
	}
}

// TestLoad31AnnotationBesideARef: 3.1 keeps a $ref's siblings, so an
// x-sandbox beside a $ref names the member it holds (3.0 would ignore it).
func TestLoad31AnnotationBesideARef(t *testing.T) {
	d := strings.Replace(doc("3.1.0", `{"type":"object","properties":{`+trial+`}}`, `"Time":{"type":"string","format":"date-time"}`),
		`"properties":{"status":{"type":"string"}}`, `"properties":{"at":{"$ref":"#/components/schemas/Time","x-sandbox":"submittedAt","description":"when"}}`, 1)
	c, err := contractdoc.Load([]byte(d))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Op(contractdoc.CreateReferral).Response.Owned["at"]; got != contractdoc.SubmittedAt {
		t.Errorf("at holds %q, want %q", got, contractdoc.SubmittedAt)
	}
}
