package sandboxtest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// TestTypesMatchTheAdminAPI: sandboxtest's own types travel as the admin
// API's JSON, which the sandbox's internal types define. Every field here
// must be one the sandbox reads or writes under the same name, or a rule
// field would be silently dropped, or a journal field always empty.
func TestTypesMatchTheAdminAPI(t *testing.T) {
	tests := []struct {
		ours, theirs any
	}{
		{Rule{}, scenarios.Rule{}},
		{RuleStatus{}, scenarios.RuleStatus{}},
		{delayJSON{}, scenarios.Delay{}},
		{JournalEntry{}, journal.Entry{}},
		{UpstreamExchange{}, journal.Upstream{}},
	}
	for _, tc := range tests {
		ours, theirs := jsonFields(reflect.TypeOf(tc.ours)), jsonFields(reflect.TypeOf(tc.theirs))
		for name := range ours {
			if !theirs[name] {
				t.Errorf("%T has JSON field %q, which %T does not", tc.ours, name, tc.theirs)
			}
		}
	}
	// The filter goes out as the query of GET /__sandbox/requests, built
	// field by field in journalQuery.
	filter := reflect.TypeFor[journal.Filter]()
	for f := range reflect.TypeFor[JournalFilter]().Fields() {
		if _, ok := filter.FieldByName(f.Name); !ok {
			t.Errorf("JournalFilter.%s has no counterpart in journal.Filter", f.Name)
		}
	}
}

// jsonFields are the JSON names of typ's fields, embedded structs
// flattened as encoding/json does.
func jsonFields(typ reflect.Type) map[string]bool {
	names := map[string]bool{}
	for f := range typ.Fields() {
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			for name := range jsonFields(f.Type) {
				names[name] = true
			}
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = true
	}
	return names
}
