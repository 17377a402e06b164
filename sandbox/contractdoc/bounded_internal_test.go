package contractdoc

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/brianvoe/gofakeit/v7"
	"github.com/getkin/kin-openapi/openapi3"
)

// kinValidate is the whole-body check by kin-openapi alone, which the
// bounded walk must agree with (below the cap): every failing member,
// built at once.
func kinValidate(s *openapi3.Schema, body any) []FieldError {
	err := s.VisitJSON(body, kinOptions(false)...)
	if err == nil {
		return nil
	}
	v := &validation{}
	v.kinErrors(err, nil)
	return v.out
}

// mutate breaks a drawn submission in one of several ways, deep inside.
func mutate(f *gofakeit.Faker, v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		})
		switch r := f.IntN(5); {
		case r == 0 && len(keys) > 0:
			delete(x, keys[f.IntN(len(keys))])
		case r == 1:
			x["undeclared"+strconv.Itoa(f.IntN(3))] = f.IntN(9)
		case len(keys) > 0:
			k := keys[f.IntN(len(keys))]
			x[k] = mutate(f, x[k], depth+1)
		}
		return x
	case []any:
		if len(x) > 0 && f.Bool() {
			i := f.IntN(len(x))
			x[i] = mutate(f, x[i], depth+1)
			return x
		}
		return append(x, 12.5, "x")
	}
	return []any{"not", map[string]any{}, 1.5, nil, true, "", json.Number("9223372036854775807")}[f.IntN(7)]
}

// TestBoundedWalkAgreesWithKinOpenAPI: on the test contracts' submissions,
// broken at random, the bounded walk names the same failing members, with
// the same messages, as kin-openapi checking the whole body.
func TestBoundedWalkAgreesWithKinOpenAPI(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "contracts", "*"))
	if len(files) == 0 {
		t.Fatal("no test contracts")
	}
	f := gofakeit.New(7)
	failing := 0
	for _, file := range files {
		c, err := LoadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []Operation{CreateReferral, CreateQualified} {
			op := c.Op(o)
			if op == nil {
				continue
			}
			for i := range 300 {
				raw, err := op.Example(f, map[Member]string{TrialID: "t", ExternalSourceID: "e"})
				if err != nil {
					t.Fatal(err)
				}
				var body any
				if err := json.Unmarshal(raw, &body); err != nil {
					t.Fatal(err)
				}
				for range 1 + i%3 {
					body = mutate(f, body, 0)
				}
				want := kinValidate(op.Request, body)
				if len(want) > 0 {
					failing++
				}
				got, _ := op.Check(body)
				if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(want)) {
					b, _ := json.Marshal(body)
					t.Errorf("%s %s %s:\n bounded %v\n kin     %v", filepath.Base(file), o, b, sorted(got), sorted(want))
				}
			}
		}
	}
	// Most broken bodies fail: the comparison is not of empty lists.
	if failing < 1000 {
		t.Errorf("only %d broken bodies failed", failing)
	}
	t.Logf("%d broken bodies failed", failing)
}

func sorted(errs []FieldError) []FieldError {
	out := slices.Clone(errs)
	slices.SortFunc(out, func(a, b FieldError) int {
		if a.Pointer != b.Pointer {
			if a.Pointer < b.Pointer {
				return -1
			}
			return 1
		}
		if a.Message < b.Message {
			return -1
		}
		if a.Message > b.Message {
			return 1
		}
		return 0
	})
	return out
}
