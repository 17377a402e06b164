package placeholder_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/referrals-sandbox/referrals-sandbox/internal/placeholder"
)

func maker(keep placeholder.Keep) *placeholder.Maker {
	return placeholder.New([]byte("a fixed key for the tests"), keep)
}

// Each value's placeholder keeps its form, is the same for the same value
// and differs for a different value of the same form.
func TestStringKeepsFormAndIsStable(t *testing.T) {
	m := maker(placeholder.Keep{})
	for _, c := range []struct {
		value, other string
		form         func(string) bool
	}{
		{"1971-03-04", "1971-03-05", func(s string) bool { _, err := time.Parse(time.DateOnly, s); return err == nil }},
		{"2026-01-02T03:04:05.1234567Z", "2026-01-02T03:04:05.1234568Z", func(s string) bool {
			_, err := time.Parse(time.RFC3339Nano, s)
			return err == nil && strings.HasSuffix(s, "Z") && len(s) == len("2026-01-02T03:04:05.1234567Z")
		}},
		{"2026-01-02 03:04:05+0100", "2026-01-02 03:04:06+0100", regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+0100$`).MatchString},
		{"6f1c2a7e-0b7d-4c1e-9f3a-2d5e8b9c0a11", "6f1c2a7e-0b7d-4c1e-9f3a-2d5e8b9c0a12", regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString},
		{"john.smith@nhs.example.org", "jane.smith@nhs.example.org", regexp.MustCompile(`^[a-z]{4}\.[a-z]{5}@example\.com$`).MatchString},
		{"+14155550123", "+14155550124", regexp.MustCompile(`^\+[1-9]\d{10}$`).MatchString},
		{"9434765919", "9434765918", regexp.MustCompile(`^[1-9]\d{9}$`).MatchString},
		{"Smith", "Smyth", regexp.MustCompile(`^[A-Z][a-z]{4}$`).MatchString},
		{"Patient John Smith (DOB 1971-03-04) not found", "Patient Jane Smith (DOB 1971-03-04) not found", func(s string) bool {
			return utf8.RuneCountInString(s) == 45 && regexp.MustCompile(`^[A-Z][a-z]+( [a-z]+)*$`).MatchString(s)
		}},
		{"https://real.example.org/api/v1/referrals/qualified/MRN-123?x=John", "https://real.example.org/api/v1/referrals/qualified/MRN-124", regexp.MustCompile(`^https://[a-z]{4}\.[a-z]{7}\.[a-z]{3}/[a-z]{3}/[a-z]\d/`).MatchString},
	} {
		p := m.String(c.value)
		if p == c.value || strings.Contains(p, "John") || strings.Contains(p, "Smith") || strings.Contains(p, "1971") {
			t.Errorf("%q kept its content: %q", c.value, p)
		}
		if !c.form(p) {
			t.Errorf("%q lost its form: %q", c.value, p)
		}
		if again := m.String(c.value); again != p {
			t.Errorf("%q got two placeholders: %q, %q", c.value, p, again)
		}
		if other := m.String(c.other); other == p {
			t.Errorf("%q and %q share placeholder %q", c.value, c.other, p)
		}
		if maker2 := placeholder.New([]byte("another instance's key"), placeholder.Keep{}); maker2.String(c.value) == p {
			t.Errorf("another key gives %q the same placeholder", c.value)
		}
	}
}

func TestNumberKeepsDigitsAndSign(t *testing.T) {
	m := maker(placeholder.Keep{})
	for _, v := range []string{"4155550123", "-12.50", "0.25", "7", "1e300"} {
		p := m.Number(v)
		if len(p) != len(v) || !json.Valid([]byte(p)) || m.Number(v) != p {
			t.Errorf("%s → %s", v, p)
		}
	}
	if first, again := m.Number("1e300"), m.Number("1e300"); first != again || !strings.HasSuffix(first, "e300") {
		t.Errorf("the exponent changed: %s", m.Number("1e300"))
	}
}

func TestDocumentsWordsAndIdentifierNamesAreKept(t *testing.T) {
	m := maker(placeholder.Keep{
		Values:   map[string]bool{"female": true},
		Segments: map[string]bool{"api": true, "v1": true, "referrals": true, "qualified": true},
		Members:  map[string]bool{"Id": true},
		ValuesOf: map[string]bool{"trialCode": true, "x-build": true},
	})
	if m.String("female") != "female" || m.String("Female") == "Female" {
		t.Error("only an enum value the document declares is kept, exactly")
	}
	if p := m.Path("/api/v1/referrals/qualified/MRN-123"); !strings.HasPrefix(p, "/api/v1/referrals/qualified/") || strings.Contains(p, "MRN-123") {
		t.Errorf("path: %s", p)
	}
	for name, kept := range map[string]bool{
		"firstName": true, "first_name": true, "$schema": true, "Id": true, "trialCode": true,
		"John Smith": false, "Smith": false, "1971-03-04": false, "john@example.org": false, "6f1c2a7e-0b7d-4c1e-9f3a-2d5e8b9c0a11": false,
		strings.Repeat("a", 41): false,
	} {
		if got := m.MemberName(name) == name; got != kept {
			t.Errorf("member name %q kept: %v, want %v", name, got, kept)
		}
	}
	if h := m.Header("Content-Type", "application/json"); h != "application/json" {
		t.Errorf("Content-Type: %s", h)
	}
	if h := m.Header("X-Request-Id", "7d1f0c9e-5b7a-4f7e-8a7e-0c1d2e3f4a5b"); h != "7d1f0c9e-5b7a-4f7e-8a7e-0c1d2e3f4a5b" {
		t.Errorf("a GUID request id: %s", h)
	}
	if h := m.Header("X-Request-Id", "john-smith-1"); h == "john-smith-1" {
		t.Error("a request id that is not a GUID was kept")
	}
	if h := m.Header("X-Build", "2026.1"); h != "2026.1" {
		t.Errorf("an operator-kept header: %s", h)
	}
	if h := m.Header("X-Patient-Name", "John Smith"); h == "John Smith" {
		t.Error("X-Patient-Name was kept")
	}
	if q := m.Query("lastName=Smith&dob=1971-03-04&trialCode=T1"); strings.Contains(q, "Smith") || strings.Contains(q, "1971") || !strings.Contains(q, "trialCode=T1") || !strings.HasPrefix(q, "lastName=") {
		t.Errorf("query: %s", q)
	}
}

func TestJSONKeepsStructureAndReplacesEveryValue(t *testing.T) {
	m := maker(placeholder.Keep{Values: map[string]bool{"received": true}, ValuesOf: map[string]bool{"codes": true}})
	body := `{"first_name":"John","name":[{"family":"Smith","given":["John","Q"]}],"ssn":123456789,"active":true,"deceased":null,` +
		`"status":"received","John Smith":{"at":"1971-03-04"},"codes":["E11","I10"],"secret":"the-partner-secret","msg":"say \"hi\"\n"}`
	out, err := m.JSON([]byte(body), 1<<20, func(s string) bool { return strings.Contains(s, "the-partner-secret") })
	if err != nil {
		t.Fatal(err)
	}
	for _, real := range []string{"John", "Smith", "123456789", "1971-03-04", "the-partner-secret", "hi"} {
		if bytes.Contains(out, []byte(real)) {
			t.Errorf("%q survived: %s", real, out)
		}
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("not JSON: %s", out)
	}
	if v["active"] != true || v["deceased"] != nil || v["status"] != "received" || v["secret"] != placeholder.Redacted {
		t.Errorf("kept values changed: %s", out)
	}
	if codes, _ := v["codes"].([]any); len(codes) != 2 || codes[0] != "E11" {
		t.Errorf("an operator-kept member's values: %s", out)
	}
	if ssn, ok := v["ssn"].(float64); !ok || ssn < 1e8 || ssn >= 1e9 {
		t.Errorf("a number lost its digits: %s", out)
	}
	if again, _ := m.JSON([]byte(body), 1<<20, nil); !bytes.Equal(again[:20], out[:20]) {
		t.Errorf("the same body, other placeholders:\n%s\n%s", out, again)
	}
	if _, err := m.JSON([]byte("Patient John Smith"), 1<<20, nil); err != placeholder.ErrNotJSON {
		t.Errorf("text: %v", err)
	}
	if _, err := m.JSON([]byte(`{"a":"`+strings.Repeat("x", 100)+`"}`), 64, nil); err != placeholder.ErrTooLong {
		t.Errorf("over the limit: %v", err)
	}
	if s, err := m.JSON([]byte(`"Patient John Smith (DOB 1971-03-04) not found"`), 1<<20, nil); err != nil || bytes.Contains(s, []byte("John")) {
		t.Errorf("a string body: %s, %v", s, err)
	}
}

// A hostile body costs a fraction of itself: a 4 MB array of empty
// objects, the cheapest JSON to send and dozens of times its size once
// decoded into Go values, is checked in place and written out only as far
// as the journal would keep it; so is one long string.
func TestJSONMemoryIsBoundedWhateverTheBody(t *testing.T) {
	const bodyBytes = 4 << 20
	body := append(bytes.Repeat([]byte("{},"), bodyBytes/3), []byte("{}")...)
	body = append(append([]byte("["), body...), ']')
	longString := []byte(`["` + strings.Repeat("John Smith ", bodyBytes/11) + `"]`)
	m := maker(placeholder.Keep{})
	for name, b := range map[string][]byte{"empty objects": body, "one long string": longString} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := m.JSON(b, 64<<10, nil)
		runtime.ReadMemStats(&after)
		if err != placeholder.ErrTooLong {
			t.Errorf("%s: %v, want too long", name, err)
		}
		if allocated := after.TotalAlloc - before.TotalAlloc; allocated > uint64(len(b))/4 {
			t.Errorf("%s: redacting a %d-byte body allocated %d bytes", name, len(b), allocated)
		}
	}
}

// TestShortValuesNeverDrawThemselves: a two-letter code (the country of an
// address) has 676 placeholders, its own among them; under any key the
// placeholder is another, and the same one every time.
func TestShortValuesNeverDrawThemselves(t *testing.T) {
	for k := range 2000 {
		m := placeholder.New([]byte{byte(k), byte(k >> 8)}, placeholder.Keep{})
		for _, v := range []string{"US", "7", "ab"} {
			if p := m.String(v); p == v || p != m.String(v) || len(p) != len(v) {
				t.Fatalf("key %d: %q → %q", k, v, p)
			}
		}
	}
}
