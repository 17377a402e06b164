package recording

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckedAnswerCutsArraysAtTheValueBudget: an answer within
// maxCheckedValues is checked whole; a larger one is cut, the same way
// each time, to about maxCheckedValues values, every array keeping its
// first item.
func TestCheckedAnswerCutsArraysAtTheValueBudget(t *testing.T) {
	small := []byte(`{"trials":[1,2,3],"more":{"a":[[1],[2]]}}`)
	if got, partial := checkedAnswer(small); partial || string(got) != string(small) {
		t.Errorf("a small answer came back as %s (partial %v)", got, partial)
	}
	if got, partial := checkedAnswer([]byte("not json")); partial || string(got) != "not json" {
		t.Errorf("a non-JSON answer came back as %s (partial %v)", got, partial)
	}

	big := []byte(`{"a":[` + strings.Repeat("1,", 3*maxCheckedValues) + `1],"b":[[1,2],[3,4]],"c":[]}`)
	got, partial := checkedAnswer(big)
	again, _ := checkedAnswer(big)
	if !partial || string(got) != string(again) {
		t.Fatalf("partial %v; two cuts differ: %d and %d bytes", partial, len(got), len(again))
	}
	var v struct {
		A []int   `json:"a"`
		B [][]int `json:"b"`
		C []int   `json:"c"`
	}
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.A) > maxCheckedValues || len(v.A) < maxCheckedValues-2 {
		t.Errorf("the long array kept %d items, want about %d", len(v.A), maxCheckedValues)
	}
	if len(v.B) != 1 || len(v.B[0]) != 1 || v.C == nil || len(v.C) != 0 {
		t.Errorf("arrays after the budget: b %v, c %v; want b's first item with its first item, c empty", v.B, v.C)
	}
}
