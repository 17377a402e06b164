package journal_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

func TestPlaceholdersKeepFormAndAreStableWithinARun(t *testing.T) {
	p := journal.NewPlaceholders()
	body := `{"patient":{"firstName":"Ada","lastName":"Lovelace","dateOfBirth":"1815-12-10","gender":"female","email":"ada@example.org","phone":"+441234567890","postalCode":"W1"},` +
		`"address":{"line1":"12 St James's Square","city":"London","country":"GB"},"notes":"call after 5","trialId":"T-1","token":"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln"}`
	isToken := func(v string) bool { return strings.HasPrefix(v, "eyJ") }
	first, ok := p.RedactJSON([]byte(body), isToken)
	if !ok {
		t.Fatal("not redacted")
	}
	for _, real := range []string{"Ada", "Lovelace", "1815-12-10", "ada@example.org", "+441234567890", "W1", "St James", "London", "call after 5", "eyJ"} {
		if strings.Contains(string(first), real) {
			t.Errorf("%q survived: %s", real, first)
		}
	}
	var v struct {
		Patient map[string]string `json:"patient"`
		Address map[string]string `json:"address"`
		TrialID string            `json:"trialId"`
	}
	if err := json.Unmarshal(first, &v); err != nil {
		t.Fatal(err)
	}
	if v.Patient["gender"] != "female" || v.Address["country"] != "GB" || v.TrialID != "T-1" {
		t.Errorf("non-patient data changed: %s", first)
	}
	if dob := v.Patient["dateOfBirth"]; len(dob) != 10 || dob[4] != '-' || !strings.HasSuffix(v.Patient["email"], "@example.com") {
		t.Errorf("placeholders lost their form: %s", first)
	}
	again, _ := p.RedactJSON([]byte(body), isToken)
	if string(again) != string(first) {
		t.Errorf("the same values got other placeholders:\n%s\n%s", first, again)
	}
	if other, _ := journal.NewPlaceholders().RedactJSON([]byte(`{"lastName":"Byron"}`), nil); strings.Contains(string(other), "Byron") {
		t.Errorf("another run: %s", other)
	}
	if _, ok := p.RedactJSON([]byte("not json"), nil); ok {
		t.Error("a body that is not JSON was taken")
	}
}

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
