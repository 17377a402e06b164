package journal

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestBudgetHoldsAfterEveryAdd: whatever mix of sizes arrives, the journal
// never holds more than its byte budget or its entry count, drops only the
// oldest, and Clear gives every byte back.
func TestBudgetHoldsAfterEveryAdd(t *testing.T) {
	forEachImpl(t, testBudgetHoldsAfterEveryAdd)
}

func testBudgetHoldsAfterEveryAdd(t *testing.T, im impl) {
	j := im.newLog(1000, MinMaxBytes)
	var lastKept uint64
	for i := range 600 {
		// Sizes cycle from a few hundred bytes to the largest truncate leaves.
		headers := map[string]string{}
		for h := range i % (MaxHeaders + 10) {
			headers[fmt.Sprintf("X-H-%03d", h)] = strings.Repeat("v", (i*37)%(2*MaxValueBytes))
		}
		j.Add(Entry{Path: "/p", RequestID: fmt.Sprint(i), Headers: headers})
		if i%im.checkEvery != 0 && i != 599 {
			continue
		}
		n, bytes := j.Usage()
		if bytes > MinMaxBytes || n > 1000 || n == 0 {
			t.Fatalf("after entry %d: %d entries, %d bytes; budget %d", i, n, bytes, MinMaxBytes)
		}
		all := j.Find(Filter{})
		if all[len(all)-1].RequestID != fmt.Sprint(i) {
			t.Fatalf("after entry %d the newest kept is %s", i, all[len(all)-1].RequestID)
		}
		if all[0].ID < lastKept {
			t.Fatalf("entry %d came back after it was dropped", all[0].ID)
		}
		lastKept = all[0].ID
		var sum int64
		for _, e := range all {
			sum += e.Size()
		}
		if sum != bytes {
			t.Fatalf("after entry %d: entries sum to %d bytes, Usage says %d", i, sum, bytes)
		}
	}
	if lastKept == 1 {
		t.Fatal("nothing was ever dropped: the test sent too little")
	}
	j.Clear()
	if n, bytes := j.Usage(); n != 0 || bytes != 0 {
		t.Errorf("after Clear: %d entries, %d bytes", n, bytes)
	}
}

// TestCountBoundStillHolds: small entries are bounded by the entry count.
func TestCountBoundStillHolds(t *testing.T) {
	forEachImpl(t, func(t *testing.T, im impl) {
		j := im.newLog(3, DefaultMaxBytes)
		for i := range 5 {
			j.Add(Entry{RequestID: fmt.Sprint(i)})
		}
		got := j.Find(Filter{})
		if len(got) != 3 || got[0].RequestID != "2" || got[2].RequestID != "4" || got[2].ID != 5 {
			t.Errorf("kept %+v, want entries 2 to 4, the last numbered 5", got)
		}
		if n, _ := j.Usage(); n != 3 {
			t.Errorf("Usage counts %d entries, want 3", n)
		}
	})
}

// TestCutValueKeepsUTF8: a cut never splits a character and always ends in
// TruncatedMark within MaxValueBytes.
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
	for _, s := range []string{"", "plain", `"quoted" \ back`, "<script>&amp;</script>", "tab\tnew\nline\r\x00\x1f",
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
