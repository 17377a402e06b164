package contractdoc_test

import (
	"fmt"
	"strings"
)

// reuseDoc is a contract whose schemas reuse references: level n is an
// object of width members, each a reference to level n-1, down to a
// string at level 0. It is small (a few KB) but names width^depth leaves
// when every reference is expanded; both the submission and the record
// use the deepest level.
func reuseDoc(width, depth int) []byte {
	var schemas []string
	schemas = append(schemas, `"L0":{"type":"string","maxLength":8}`)
	for level := 1; level <= depth; level++ {
		props := make([]string, width)
		for i := range props {
			props[i] = fmt.Sprintf(`"m%d":{"$ref":"#/components/schemas/L%d"}`, i, level-1)
		}
		schemas = append(schemas, fmt.Sprintf(`"L%d":{"type":"object","properties":{%s}}`, level, strings.Join(props, ",")))
	}
	record := fmt.Sprintf(`{"type":"object","properties":{"trialId":{"type":"string"},"status":{"type":"string"},"body":{"$ref":"#/components/schemas/L%d"}}}`, depth)
	return []byte(`{"openapi":"3.0.3","info":{"title":"reuse","version":"1"},
"paths":{"/api/v1/referrals/":{"post":{"requestBody":{"content":{"application/json":{"schema":` + record + `}}},
"responses":{"201":{"description":"ok","content":{"application/json":{"schema":` + record + `}}}}}},
"/api/v1/referrals/{trial_id}/{outcomes_id}":{"get":{"parameters":[{"name":"trial_id","in":"path","required":true,"schema":{"type":"string"}},{"name":"outcomes_id","in":"path","required":true,"schema":{"type":"string"}}],
"responses":{"200":{"description":"ok","content":{"application/json":{"schema":` + record + `}}}}}}},
"components":{"schemas":{` + strings.Join(schemas, ",") + `}}}`)
}
