package journal_test

import (
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

func TestReadEntriesTakesEveryFormTheSandboxWrites(t *testing.T) {
	line := `{"id":1,"method":"GET","path":"/health/ping","status":200,"requestId":"r","headers":{}}`
	for name, text := range map[string]string{
		"json lines": line + "\n" + strings.Replace(line, `"id":1`, `"id":2`, 1) + "\n",
		"array":      "[" + line + "," + line + "]",
		"page":       `{"requests":[` + line + `,` + line + `],"nextAfterId":null}`,
	} {
		entries, err := journal.ReadEntries(strings.NewReader(text))
		if err != nil || len(entries) != 2 || entries[0].Path != "/health/ping" {
			t.Errorf("%s: %v, %+v", name, err, entries)
		}
	}
	if _, err := journal.ReadEntries(strings.NewReader(`{"hello":"world"}`)); err == nil {
		t.Error("a JSON object that is no entry was read")
	}
}
