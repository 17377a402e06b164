package contractdoc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/brianvoe/gofakeit/v7"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
)

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLoadReusedSchemasIsBounded: a 3 KB document reusing a schema 8 ways
// over 7 levels (8^7 leaves when its references are expanded) loads, at a
// cost in proportion to the document, not to the expansion.
func TestLoadReusedSchemasIsBounded(t *testing.T) {
	d := reuseDoc(8, 7)
	var c *contractdoc.Contract
	var err error
	bytes := allocated(func() { c, err = contractdoc.Load(d) })
	if err != nil {
		t.Fatal(err)
	}
	const limit = 32 << 20
	t.Logf("a %d-byte document reusing 8 ways over 7 levels: %d bytes allocated", len(d), bytes)
	if bytes > limit {
		t.Errorf("loading allocated %d bytes, want at most %d", bytes, limit)
	}
	// It is a working contract: a submission is checked through every level.
	var body any
	inner := `{"m3":"far too long"}`
	for range 6 {
		inner = `{"m0":` + inner + `}`
	}
	if err := json.Unmarshal([]byte(`{"trialId":"t","body":`+inner+`}`), &body); err != nil {
		t.Fatal(err)
	}
	got := c.Op(contractdoc.CreateReferral).Validate(body)
	if len(got) != 1 || got[0].Pointer != "/body/m0/m0/m0/m0/m0/m0/m3" {
		t.Errorf("Validate = %+v, want one error at /body/m0/m0/m0/m0/m0/m0/m3", got)
	}
}

// TestExampleOfReusedSchemasIsBounded: a document reusing a schema with
// every member required needs an example of 8^7 values; drawing one stops
// at the bound and says why.
func TestExampleOfReusedSchemasIsBounded(t *testing.T) {
	d := strings.ReplaceAll(string(reuseDoc(8, 7)), `"type":"object","properties":{"m0"`, `"type":"object","required":["m0","m1","m2","m3","m4","m5","m6","m7"],"properties":{"m0"`)
	d = strings.Replace(d, `"properties":{"trialId"`, `"required":["body"],"properties":{"trialId"`, 1)
	c, err := contractdoc.Load([]byte(d))
	if err != nil {
		t.Fatal(err)
	}
	bytes := allocated(func() {
		_, err = c.Op(contractdoc.CreateReferral).Example(gofakeit.New(1), nil)
	})
	if err == nil || !strings.Contains(err.Error(), "more than 100000 values") {
		t.Errorf("Example error %v, want the bound named", err)
	}
	if bytes > 64<<20 {
		t.Errorf("drawing allocated %d bytes, want at most %d", bytes, 64<<20)
	}
	t.Logf("%d bytes allocated", bytes)
}

// TestLoadRefusesAllOfFanOut: reuse inside allOf multiplies the schemas
// every value is checked against; past the bound the document is refused
// by pointer, at once.
func TestLoadRefusesAllOfFanOut(t *testing.T) {
	var schemas []string
	schemas = append(schemas, `"A0":{"type":"object","properties":{"x":{"type":"string"}}}`)
	for level := 1; level <= 7; level++ {
		parts := strings.Repeat(fmt.Sprintf(`{"$ref":"#/components/schemas/A%d"},`, level-1), 8)
		schemas = append(schemas, fmt.Sprintf(`"A%d":{"allOf":[%s]}`, level, strings.TrimSuffix(parts, ",")))
	}
	d := doc("3.0.3", `{"type":"object","properties":{`+trial+`,"a":{"$ref":"#/components/schemas/A7"}}}`, strings.Join(schemas, ","))
	var err error
	bytes := allocated(func() { _, err = contractdoc.Load([]byte(d)) })
	if err == nil || !strings.Contains(err.Error(), "more than 1000 schemas through allOf and oneOf") {
		t.Fatalf("Load error %v, want the allOf fan-out refused", err)
	}
	if bytes > 32<<20 {
		t.Errorf("refusing allocated %d bytes, want at most %d", bytes, 32<<20)
	}
}

// TestLoadRefusesLongReuseChains: a 570 KB document whose 1,500 schemas
// each reuse the one before would cost kin-openapi's validation the square
// of its size (each schema validated again from every schema above it); it
// is refused before, at a cost in proportion to the document.
func TestLoadRefusesLongReuseChains(t *testing.T) {
	d := reuseDoc(8, 1500)
	var err error
	bytes := allocated(func() { _, err = contractdoc.Load(d) })
	if err == nil || !strings.Contains(err.Error(), "the sandbox refuses a document this costly to load") {
		t.Fatalf("Load error %v, want the chain refused", err)
	}
	t.Logf("a %d-byte chain refused with %d bytes allocated", len(d), bytes)
	if bytes > 256<<20 {
		t.Errorf("refusing allocated %d bytes, want at most %d", bytes, 256<<20)
	}
}

// TestLoadRefusesAnnotatedSchemaReusedLevelAfterLevel: a sandbox member
// annotated in a schema reused 8 ways over 3 levels would be placed 512
// times in every record; the document is refused, naming the schema.
func TestLoadRefusesAnnotatedSchemaReusedLevelAfterLevel(t *testing.T) {
	schemas := []string{`"A0":{"type":"object","properties":{"at":{"type":"string","x-sandbox":"submittedAt"}}}`}
	for level := 1; level <= 3; level++ {
		props := make([]string, 8)
		for i := range props {
			props[i] = fmt.Sprintf(`"m%d":{"$ref":"#/components/schemas/A%d"}`, i, level-1)
		}
		schemas = append(schemas, fmt.Sprintf(`"A%d":{"type":"object","properties":{%s}}`, level, strings.Join(props, ",")))
	}
	d := strings.Replace(doc("3.0.3", `{"type":"object","properties":{`+trial+`}}`, strings.Join(schemas, ",")),
		`"properties":{"status":{"type":"string"}}`, `"properties":{"status":{"type":"string"},"meta":{"$ref":"#/components/schemas/A3"}}`, 1)
	_, err := contractdoc.Load([]byte(d))
	if err == nil || !strings.Contains(err.Error(), "more than 256 sandbox members") {
		t.Fatalf("Load error %v, want the placements refused", err)
	}
}

// TestLoadStopsWhenCancelled: a load whose context has ended stops with
// the context's error rather than finishing.
func TestLoadStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := contractdoc.LoadContext(ctx, reuseDoc(8, 7))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("LoadContext error %v, want context.Canceled", err)
	}
	if !strings.Contains(err.Error(), "loading stopped") {
		t.Errorf("error %q does not say the load stopped", err)
	}
}

// TestValidationStopsAtTheCap: a 1 MB submission of 340,000 invalid items
// is refused with MaxErrors of them, saying there may be more, at a cost
// that does not grow with the items past the cap.
func TestValidationStopsAtTheCap(t *testing.T) {
	c, err := contractdoc.Load([]byte(doc("3.0.3", `{"type":"object","properties":{`+trial+`,"tags":{"type":"array","items":{"type":"string"}}}}`, "")))
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"trialId":"t","tags":[` + strings.TrimSuffix(strings.Repeat("10,", 340000), ",") + `]}`)
	if len(raw) < 1<<20-64*1024 {
		t.Fatalf("body %d bytes, want about 1 MB", len(raw))
	}
	var body any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	op := c.Op(contractdoc.CreateReferral)
	var got []contractdoc.FieldError
	var more bool
	bytes := allocated(func() { got, more = op.Check(body) })
	t.Logf("%d invalid items in %d bytes: %d bytes allocated", 340000, len(raw), bytes)
	if len(got) != contractdoc.MaxErrors || !more {
		t.Errorf("Check = %d errors, more %v; want %d and more", len(got), more, contractdoc.MaxErrors)
	}
	if got[0].Pointer != "/tags/0" || got[len(got)-1].Pointer != fmt.Sprintf("/tags/%d", contractdoc.MaxErrors-1) {
		t.Errorf("errors from %s to %s, want the first %d items", got[0].Pointer, got[len(got)-1].Pointer, contractdoc.MaxErrors)
	}
	if bytes > 256<<10 {
		t.Errorf("validation allocated %d bytes, want at most %d", bytes, 256<<10)
	}
	if _, more := op.Check(map[string]any{"trialId": "t", "tags": []any{1.0}}); more {
		t.Error("one failing item reported as possibly more")
	}
}

// TestValidateNumericFormatsExactly: int32 and int64 take exactly their
// ranges, as written (2^63-1 and 2^63 are one float64), and float and
// double their magnitudes.
func TestValidateNumericFormatsExactly(t *testing.T) {
	c, err := contractdoc.Load([]byte(doc("3.0.3", `{"type":"object","properties":{`+trial+`,
"i64":{"type":"integer","format":"int64"},"i32":{"type":"integer","format":"int32"},
"f":{"type":"number","format":"float"},"d":{"type":"number","format":"double"}}}`, "")))
	if err != nil {
		t.Fatal(err)
	}
	op := c.Op(contractdoc.CreateReferral)
	tests := []struct {
		member, number string
		ok             bool
	}{
		{"i64", "9223372036854775807", true}, {"i64", "-9223372036854775808", true},
		{"i64", "9223372036854775808", false}, {"i64", "-9223372036854775809", false}, {"i64", "1e19", false},
		{"i32", "2147483647", true}, {"i32", "2147483648", false}, {"i32", "-2147483649", false},
		{"f", "3.4e38", true}, {"f", "-3.4e38", true}, {"f", "1e300", false}, {"f", "3.5e38", false},
		{"d", "1e300", true}, {"d", "1e309", false},
	}
	for _, tc := range tests {
		body := map[string]any{"trialId": "t", tc.member: json.Number(tc.number)}
		got := op.Validate(body)
		if ok := len(got) == 0; ok != tc.ok {
			t.Errorf("%s = %s: errors %+v, want accepted %v", tc.member, tc.number, got, tc.ok)
		} else if !ok && got[0].Pointer != "/"+tc.member {
			t.Errorf("%s = %s: error at %s", tc.member, tc.number, got[0].Pointer)
		}
	}
	// A float64 (a caller decoding without json.Number): 2^63 is out of range.
	if got := op.Validate(map[string]any{"trialId": "t", "i64": 9223372036854775808.0}); len(got) != 1 {
		t.Errorf("i64 = 2^63 as float64: %+v, want refused", got)
	}
}

// BenchmarkContractLoad loads documents that reuse a schema 8 ways over a
// growing number of levels: the document grows by one level's size each
// step, and so should time and memory, though the expansion grows 8 times.
func BenchmarkContractLoad(b *testing.B) {
	for _, levels := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		d := reuseDoc(8, levels)
		b.Run(fmt.Sprintf("levels=%d/bytes=%d", levels, len(d)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := contractdoc.Load(d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
