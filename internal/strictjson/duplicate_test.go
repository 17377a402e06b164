package strictjson

import (
	"reflect"
	"testing"
)

func TestFindDuplicate(t *testing.T) {
	tests := []struct {
		name, doc string
		pointer   string
		path      []Step
	}{
		{"none", `{"a":1,"b":{"c":[{"c":1},{"d":2}]}}`, "", nil},
		{"top level", `{"externalSourceId":"a","externalSourceId":"b"}`, "/externalSourceId", []Step{{Name: "externalSourceId"}}},
		{"nested", `{"patient":{"gender":"female","lastName":"x","gender":"male"}}`, "/patient/gender", []Step{{Name: "patient"}, {Name: "gender"}}},
		{"in an array", `{"conditions":[{"code":"a"},{"code":"b","code":"c"}]}`, "/conditions/1/code",
			[]Step{{Name: "conditions"}, {Index: 1, InArray: true}, {Name: "code"}}},
		{"differing in case", `{"patient":{"Gender":"female","gender":"male"}}`, "/patient/gender", []Step{{Name: "patient"}, {Name: "gender"}}},
		{"in a top-level array", `[{"a":1},{"a":1,"a":2}]`, "/1/a", []Step{{Index: 1, InArray: true}, {Name: "a"}}},
		{"same name in sibling objects", `{"a":{"x":1},"b":{"x":1}}`, "", nil},
		{"after invalid UTF-8", "{\"a\":\"\xff\",\"a\":1}", "/a", []Step{{Name: "a"}}},
		{"malformed: left to the decoder", `{"a":1,"b"`, "", nil},
		{"not an object", `"a"`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dup, found := FindDuplicate([]byte(tt.doc))
			if found != (tt.pointer != "") || dup.Pointer != tt.pointer || !reflect.DeepEqual(dup.Path, tt.path) {
				t.Errorf("FindDuplicate = %+v, %v; want pointer %q, path %+v", dup, found, tt.pointer, tt.path)
			}
		})
	}
}

// BenchmarkFindDuplicate reads a qualified referral of the usual size:
// the cost every JSON request body now pays before it is decoded.
func BenchmarkFindDuplicate(b *testing.B) {
	body := []byte(`{"externalSourceId":"ext-1","trialId":"TRIAL-CARDIO-001","patient":{"firstName":"Ann","lastName":"Lee",` +
		`"dateOfBirth":"1980-04-12","gender":"female","email":"ann@example.com"},"conditions":[{"code":"I10","system":"icd-10"},` +
		`{"code":"E11","system":"icd-10"}],"medications":[{"name":"metformin"}],"notes":"prefers mornings"}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, found := FindDuplicate(body); found {
			b.Fatal("duplicate")
		}
	}
}
