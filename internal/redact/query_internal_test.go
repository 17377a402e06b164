package redact

import "testing"

// FuzzPlainQuery: a query that Query gives back as it is (plainQuery) is
// exactly what parsing it, redacting it and encoding it again gives.
func FuzzPlainQuery(f *testing.F) {
	jwtLike := "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
	for _, seed := range []string{
		"limit=50", "cursor=abc123&limit=5", "limit=5&cursor=abc", "limit=5&cursor=xyz", "a=1&a=2", "flag", "=5", "a=1&&b=2",
		"a=%41", "a=b;c=d", "a+b=c", "a=b=c", "code=x", "x=" + jwtLike, jwtLike, "x=abc", "pw=sandbox-partner-secret",
	} {
		f.Add(seed)
	}
	x := New([]string{"sandbox-partner-secret", "abc"})
	f.Fuzz(func(t *testing.T, raw string) {
		if raw != "" && x.plainQuery(raw) && x.query(raw) != raw {
			t.Errorf("Query gives %q back as it is; parsed, redacted and encoded it is %q", raw, x.query(raw))
		}
	})
}

// TestPlainQuery: the queries a listing sends are given back without
// being parsed, and nothing that parsing would change or that holds a
// credential is.
func TestPlainQuery(t *testing.T) {
	x := New([]string{"sandbox-partner-secret", "abc"})
	for raw, want := range map[string]bool{
		"limit=50":                  true,
		"cursor=abc123&limit=5":     true, // the short secret "abc" counts only whole
		"cursor=abcd&limit=5":       true,
		"cursor=xyz&limit=5":        true,
		"limit=5&cursor=xyz":        false, // out of order: encoding sorts it
		"a=1&a=2":                   false,
		"flag":                      false, // encoded as "flag="
		"a=%41":                     false,
		"a=b;c=d":                   false,
		"code=x":                    false, // a credential by its name
		"x=abc":                     false, // a known secret
		"pw=sandbox-partner-secret": false,
	} {
		if got := x.plainQuery(raw); got != want {
			t.Errorf("plainQuery(%q) = %t, want %t", raw, got, want)
		}
	}
}
