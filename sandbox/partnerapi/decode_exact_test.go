package partnerapi

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// exactTypes are the types that claim exactJSON.
var exactTypes = []reflect.Type{
	reflect.TypeFor[referralRequest](),
	reflect.TypeFor[qualifiedReferralRequest](),
}

// TestExactJSONTypes holds every exactJSON type to what decodeExact's
// equivalence with decodeBody rests on: no maps or interfaces (whose
// objects decodeExact would not scan for names repeated in another case),
// no numbers or custom unmarshalers (decoded by rules of their own), and
// no struct whose JSON names differ only in case.
func TestExactJSONTypes(t *testing.T) {
	for _, typ := range exactTypes {
		if !reflect.PointerTo(typ).Implements(reflect.TypeFor[exactJSON]()) {
			t.Errorf("%v does not implement exactJSON", typ)
		}
		checkExactType(t, typ, typ.String())
	}
}

func checkExactType(t *testing.T, typ reflect.Type, path string) {
	t.Helper()
	if reflect.PointerTo(typ).Implements(reflect.TypeFor[json.Unmarshaler]()) ||
		reflect.PointerTo(typ).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
		t.Errorf("%s (%v) has its own unmarshaler", path, typ)
	}
	switch typ.Kind() {
	case reflect.String:
	case reflect.Pointer, reflect.Slice:
		checkExactType(t, typ.Elem(), path+"[]")
	case reflect.Struct:
		names := map[string]string{}
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous || !f.IsExported() || name == "" || name == "-" {
				t.Errorf("%s.%s: embedded, unexported or without a JSON name", path, f.Name)
				continue
			}
			if other, ok := names[strings.ToLower(name)]; ok {
				t.Errorf("%s: %q and %q differ only in case", path, other, name)
			}
			names[strings.ToLower(name)] = name
			checkExactType(t, f.Type, path+"."+name)
		}
	default:
		t.Errorf("%s is a %v", path, typ.Kind())
	}
}

// FuzzDecodeExact holds decodeExact to decodeBody's answer: whatever body
// it accepts, the two-pass decode accepts too, with no unknown member, and
// decodes to the same value.
func FuzzDecodeExact(f *testing.F) {
	for _, body := range []string{
		`{"externalSourceId":"ext-1","trialId":"TRIAL-CARDIO-001","patient":{"firstName":"Ann","lastName":"Lee","dateOfBirth":"1980-04-12","gender":"female"},"conditions":[{"code":"I50.9","system":"ICD-10-CM","display":"Heart failure"}]}`,
		` {"externalSourceId":"e","address":{"country":"US"},"medications":[],"conditions":null,"qualification":{"criteriaMet":[]}} ` + "\n",
		`{"trialId":"NCT05550001","patient":{"firstName":"Ann"},"notes":"x"}`,
		`{"externalSourceId":"a","ExternalSourceId":"b"}`,
		`{"externalSourceId":"a","externalSourceId":"b"}`,
		`{"patient":{"gender":"f","Gender":"m"}}`,
		`{"conditions":[{"code":"a","code":"b"}]}`,
		`{"Patient":{"firstName":"Ann"}}`,
		`{"externalSourceid":"a"}`,
		`{"unknown":1}`,
		`{"patient":{"firstName":null}}`,
		`{"patient":null,"address":null}`,
		`null`,
		` null `,
		`[]`,
		`"x"`,
		``,
		`{}`,
		`{} {}`,
		`{}x`,
		`{"externalSourceId":"\ud800"}`,
		`{"externalSourceId":"\ud83d\ude00\u00e9\/\n"}`,
		"{\"externalSourceId\":\"\xff\"}",
		"\xef\xbb\xbf{}",
		`{"externalSourceId":1}`,
		`{"conditions":{}}`,
		`{"conditions":[null]}`,
		`{"address":{"line1":"<b>&"}}`,
		`{"qualification":{"criteriaMet":["a",null]}}`,
		`{"externalSourceId":"a"`,
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkExact[qualifiedReferralRequest](t, body)
		checkExact[referralRequest](t, body)
	})
}

func checkExact[T any, P interface {
	*T
	exactJSON
}](t *testing.T, body []byte) {
	t.Helper()
	var fast, slow T
	if !decodeExact(body, P(&fast)) {
		return
	}
	unknown, err := decodeAnyBody(body, &slow)
	if err != nil || unknown != nil {
		t.Fatalf("decodeExact took %q, which decodeBody answers %v (unknown %q)", body, err, unknown)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q decodes to\n%#v\nin one pass, to\n%#v\nin two", body, fast, slow)
	}
}
