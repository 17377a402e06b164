package redisslot

import "testing"

// A client tag stays one whole hash tag, whatever the client id holds:
// a brace would end it early (two clients sharing a tag by accident, or
// a key whose tag is cut), a ':' would be taken for the key separator.
func TestClientTag(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"sandbox-partner", "{c:sandbox-partner}"},
		{"", "{c:}"},
		{"a}b", "{c:a%7Db}"},
		{"{x}", "{c:%7Bx%7D}"},
		{"a:b%c", "{c:a%3Ab%25c}"},
		{"tab\there", "{c:tab%09here}"},
	} {
		if got := ClientTag(tc.id); got != tc.want {
			t.Errorf("ClientTag(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}
