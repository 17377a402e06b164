package store

import (
	"encoding/base64"
	"encoding/json"
	"testing"
)

// TestEncodeCursorAsJSONMarshal: a cursor is base64url of what
// json.Marshal writes for it, whether its line is written directly or,
// holding a byte json.Marshal escapes or escape's '%', marshalled.
func TestEncodeCursorAsJSONMarshal(t *testing.T) {
	for _, line := range []string{
		"sandbox-partner:2025-12-20T01:19:12.092480Z:00000354-718e-459f-bcca-8ab54748c816",
		"", "a%2Fb", `quote"d`, `back\\slash`, "a<b", "a>b", "a&b", "naïve", "tab\there", "line\u2028sep", "\x7f",
	} {
		for _, kind := range []string{"r", "q"} {
			got, err := encodeCursor(kind, line)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(cursor{Kind: kind, Line: line})
			if err != nil {
				t.Fatal(err)
			}
			if got != base64.RawURLEncoding.EncodeToString(want) {
				raw, _ := base64.RawURLEncoding.DecodeString(got)
				t.Errorf("cursor of %q: %s, want %s", line, raw, want)
			}
			if back, err := parseCursor(got, kind); err != nil || back != line {
				t.Errorf("cursor of %q reads back as %q (%v)", line, back, err)
			}
		}
	}
}

// BenchmarkEncodeCursor is the next cursor a listing page hands back.
func BenchmarkEncodeCursor(b *testing.B) {
	line := "sandbox-partner:2025-12-20T01:19:12.092480Z:00000354-718e-459f-bcca-8ab54748c816"
	for b.Loop() {
		if _, err := encodeCursor("r", line); err != nil {
			b.Fatal(err)
		}
	}
}
