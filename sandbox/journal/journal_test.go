package journal

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCutValueKeepsUTF8(t *testing.T) {
	for _, unit := range []string{"a", "é", "€", "𝄞"} {
		got, cut := cutValue(strings.Repeat(unit, MaxValueBytes+1))
		if !cut || len(got) > MaxValueBytes || !strings.HasSuffix(got, TruncatedMark) ||
			strings.TrimSuffix(got, TruncatedMark) != strings.Repeat(unit, len(strings.TrimSuffix(got, TruncatedMark))/len(unit)) {
			t.Errorf("cut of %q×%d: %d bytes ending %q", unit, MaxValueBytes, len(got), got[max(0, len(got)-8):])
		}
	}
	if got, cut := cutValue(strings.Repeat("a", MaxValueBytes)); cut || len(got) != MaxValueBytes {
		t.Errorf("a value of exactly MaxValueBytes was cut")
	}
}

// TestJSONLenMatchesEncodingJSON: Size counts strings exactly as
// encoding/json writes them, escapes included, so the budget bounds the
// answer of GET /__sandbox/requests.
func TestJSONLenMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `"quoted" \ back`, "<script>&amp;</script>", "tab\tnew\nline\r\x00\x1f", "back\bfeed\f",
		"é€𝄞", "bad \xff\xfe utf-8", "sep\u2028\u2029", strings.Repeat("<", 100)} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := jsonLen(s), len(b)-2; got != want {
			t.Errorf("jsonLen(%q) = %d, encoding/json writes %d", s, got, want)
		}
	}
}
