package redact_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
)

// TestLogCutsAndRedacts: a log keeps at most MaxLogValueBytes of a value,
// on a UTF-8 boundary, and judges the whole value first, so a token beyond
// the cut still makes the value [redacted].
func TestLogCutsAndRedacts(t *testing.T) {
	x := redact.New([]string{"sandbox-partner-secret"})
	long := strings.Repeat("é", 100) // 200 bytes of two-byte runes
	got := x.Log(long)
	if !utf8.ValidString(got) || len(got) > redact.MaxLogValueBytes+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("Log of 200 bytes = %q (%d bytes), want at most %d valid bytes ending in …", got, len(got), redact.MaxLogValueBytes)
	}
	for name, v := range map[string]string{
		"token after the cut": strings.Repeat("a", 500) + " " + jwtLike,
		"secret as the value": "sandbox-partner-secret",
		"secret inside":       "id=sandbox-partner-secret;",
		"Entra-shaped secret": "abc8Q~" + strings.Repeat("x", 34),
		"Bearer in a Host":    "Bearer abcdefgh",
	} {
		if got := x.Log(v); got != redact.Redacted {
			t.Errorf("%s: Log = %q, want %s", name, got, redact.Redacted)
		}
	}
	if got := x.Log("sandbox-partner"); got != "sandbox-partner" {
		t.Errorf("an ordinary client id became %q", got)
	}
	path := "/__sandbox/scenarios/" + jwtLike + "/" + strings.Repeat("p", 300)
	if got := x.LogPath(path); !strings.HasPrefix(got, "/__sandbox/scenarios/"+redact.Redacted+"/") || len(got) > redact.MaxLogValueBytes+len("…") {
		t.Errorf("LogPath = %q, want the token segment redacted and the path cut", got)
	}
}
