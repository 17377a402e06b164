package recording

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// maxCheckedValues bounds the JSON values of one diverging answer that are
// validated for the list of divergences. kin-openapi's validation makes an
// error value per divergence and cannot stop early, so without it the time
// and memory of listing grow with the answer: a real service answering
// millions of invalid items would hold the request for seconds and take
// hundreds of megabytes before anything was journaled or logged.
const maxCheckedValues = 10_000

// checkedAnswer is the part of a JSON answer the divergence list is built
// from: the answer itself when it has at most maxCheckedValues values, else
// a copy whose arrays end where the count ran out (each keeping its first
// item, so that no array becomes empty and breaks a minItems it kept).
// partial says that values were left out, so the count of divergences is
// a lower bound. An answer that is not JSON is returned whole: the
// validator does not walk it.
func checkedAnswer(body []byte) (checked []byte, partial bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return body, false
	}
	budget := maxCheckedValues
	v, partial = prune(v, &budget)
	if !partial {
		return body, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body, false // plain decoded JSON; cannot happen
	}
	return out, true
}

// prune walks v depth first (members in name order), counting values against budget, and
// cuts every array met once budget is spent to its first item. It reports
// whether it cut anything.
func prune(v any, budget *int) (any, bool) {
	*budget--
	cut := false
	switch t := v.(type) {
	case []any:
		kept := t[:0:0]
		for i, item := range t {
			if i > 0 && *budget <= 0 {
				cut = true
				break
			}
			item, c := prune(item, budget)
			cut = cut || c
			kept = append(kept, item)
		}
		return kept, cut
	case map[string]any:
		// In name order, so that the same answer is cut the same way.
		for _, k := range slices.Sorted(maps.Keys(t)) {
			item, c := prune(t[k], budget)
			cut = cut || c
			t[k] = item
		}
	}
	return v, cut
}
