package contractdoc_test

import (
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/openapi"
)

// doc is a minimal contract: POST /referrals/ whose request schema is
// request, with components schemas.
func doc(version, request, schemas string) string {
	return `{"openapi":"` + version + `","info":{"title":"t","version":"1"},
"paths":{"/api/v1/referrals/":{"post":{"requestBody":{"content":{"application/json":{"schema":` + request + `}}},
"responses":{"201":{"description":"ok","content":{"application/json":{"schema":{"type":"object","properties":{"status":{"type":"string"}}}}}}}}}},
"components":{"schemas":{` + schemas + `}}}`
}

const trial = `"trialId":{"type":"string"}`

// TestLoadRefusesUnsupported: every construct the validator would not
// honour refuses the document, naming it by JSON Pointer.
func TestLoadRefusesUnsupported(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"not", doc("3.0.3", `{"type":"object","properties":{`+trial+`,"a":{"not":{"type":"string"}}}}`, ""),
			"/paths/~1api~1v1~1referrals~1/post/requestBody/content/application~1json/schema/properties/a/not"},
		{"anyOf in a component", doc("3.0.3", `{"$ref":"#/components/schemas/R"}`, `"R":{"type":"object","properties":{`+trial+`,"p":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`),
			"/components/schemas/R/properties/p/anyOf"},
		{"discriminator", doc("3.0.3", `{"$ref":"#/components/schemas/R"}`, `"R":{"type":"object","properties":{`+trial+`},"oneOf":[{"$ref":"#/components/schemas/A"}],"discriminator":{"propertyName":"trialId"}},"A":{"type":"object"}`),
			"/components/schemas/R/discriminator"},
		{"unknown format", doc("3.0.3", `{"type":"object","properties":{`+trial+`,"u":{"type":"string","format":"uri"}}}`, ""),
			"/properties/u/format"},
		{"recursive", doc("3.0.3", `{"$ref":"#/components/schemas/R"}`, `"R":{"type":"object","properties":{`+trial+`,"next":{"$ref":"#/components/schemas/R"}}}`),
			"/components/schemas/R/properties/next: recursive"},
		{"external $ref", doc("3.0.3", `{"$ref":"other.json#/R"}`, ""),
			"/paths/~1api~1v1~1referrals~1/post/requestBody/content/application~1json/schema/$ref"},
		{"unknown x-sandbox", doc("3.0.3", `{"type":"object","properties":{`+trial+`,"z":{"type":"string","x-sandbox":"submitedAt"}}}`, ""),
			"/properties/z/x-sandbox"},
		{"sandbox member inside an array's items", strings.Replace(doc("3.0.3", `{"type":"object","properties":{`+trial+`}}`, ""),
			`"properties":{"status":{"type":"string"}}`, `"properties":{"log":{"type":"array","items":{"type":"object","properties":{"at":{"type":"string","x-sandbox":"submittedAt"}}}}}`, 1),
			"/responses/201/content/application~1json/schema/properties/log/items/properties/at/x-sandbox: a sandbox member inside an array's items is not supported"},
		{"no trialId", doc("3.0.3", `{"type":"object","properties":{"t":{"type":"string"}}}`, ""),
			"needs a trialId member"},
		{"OpenAPI 3.2", doc("3.2.0", `{"type":"object","properties":{`+trial+`}}`, ""),
			"/openapi: version \"3.2.0\" is not supported"},
		{"no referral operation", `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/pets":{"get":{"responses":{"200":{"description":"ok"}}}}}}`,
			"describes none of the referral operations"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := contractdoc.Load([]byte(strings.ReplaceAll(tc.doc, `,"components":{"schemas":{}}`, "")))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// TestBuiltinDocumentIsAContract: the built-in document loads as a contract
// describing all six operations, and takes none of them over.
func TestBuiltinDocumentIsAContract(t *testing.T) {
	c, err := contractdoc.Load(openapi.Document())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range contractdoc.Operations() {
		if c.Op(o) == nil {
			t.Errorf("%s not found in the built-in document", o)
		}
		if c.TakesOver(o) != nil {
			t.Errorf("the built-in document takes over %s", o)
		}
	}
}

// TestValidateNamesFieldsByPointer: every failing member, by JSON Pointer,
// with strict calendar dates.
func TestValidateNamesFieldsByPointer(t *testing.T) {
	c, err := contractdoc.Load([]byte(doc("3.0.3", `{"type":"object","required":["trialId","p"],"additionalProperties":false,"properties":{`+trial+`,
"p":{"type":"object","required":["born"],"properties":{"born":{"type":"string","format":"date"},"sex":{"type":"string","enum":["F","M"]}}},
"a/b":{"type":"array","items":{"type":"string","minLength":2}}}}`, "")))
	if err != nil {
		t.Fatal(err)
	}
	op := c.Op(contractdoc.CreateReferral)
	got := op.Validate(map[string]any{"trialId": "x", "p": map[string]any{"born": "2023-02-30", "sex": "f"}, "a/b": []any{"ok", "x"}, "extra": 1.0})
	want := map[string]bool{"/p/born": true, "/p/sex": true, "/a~1b/1": true, "/extra": true}
	for _, fe := range got {
		if !want[fe.Pointer] {
			t.Errorf("unexpected error %+v", fe)
		}
		delete(want, fe.Pointer)
	}
	if len(want) > 0 {
		t.Errorf("no error on %v; got %+v", want, got)
	}
	if got := op.Validate(map[string]any{"trialId": "x"}); len(got) != 1 || got[0].Pointer != "/p" || got[0].Message != "required" {
		t.Errorf("missing p: %+v, want one required error on /p", got)
	}
	if got := op.Validate(map[string]any{"trialId": "x", "p": map[string]any{"born": "2024-02-29"}}); len(got) != 0 {
		t.Errorf("valid submission refused: %+v", got)
	}
}
