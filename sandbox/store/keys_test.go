package store

import "testing"

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain-id_1.2", "plain-id_1.2"},
		{"a:b", "a%3Ab"},
		{"a%3Ab", "a%253Ab"},
		{"50%", "50%25"},
		{"line\nbreak", "line%0Abreak"},
		{"del\x7f", "del%7F"},
		{"ünïcode", "ünïcode"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := escape(tc.in); got != tc.want {
			t.Errorf("escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRecordKeyDistinct: pairs that naive concatenation would merge get
// different keys.
func TestRecordKeyDistinct(t *testing.T) {
	pairs := [][2]string{ // client, id
		{"a", "b:c"}, {"a:b", "c"}, {"a%3Ab", "c"}, {"a:", "b:c"}, {"a", ":b:c"}, {"a", "b%3Ac"},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		for _, prefix := range []string{referralPrefix, qualifiedPrefix} {
			k := recordKey(prefix, p[0], p[1])
			if other, ok := seen[k]; ok {
				t.Errorf("%q and %q share key %q", p, other, k)
			}
			seen[k] = p
		}
	}
}

func TestCanonicalTimestamp(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"2025-10-13T09:00:00.000000Z", "2025-10-13T09:00:00.000000Z", true},
		{"2025-10-13T11:00:00+02:00", "2025-10-13T09:00:00.000000Z", true},
		{"2025-10-13T09:00:00.123456789Z", "2025-10-13T09:00:00.123456Z", true},
		{"2025-10-13", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		got, err := CanonicalTimestamp(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("CanonicalTimestamp(%q) = %q, %v; want %q, ok %t", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
