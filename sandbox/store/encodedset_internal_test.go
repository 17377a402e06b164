package store

import (
	"slices"
	"strings"
	"testing"
)

// TestPackerKeepsEveryString: strings packed across chunks of growing
// size, and one larger than any chunk, each read back as it was.
func TestPackerKeepsEveryString(t *testing.T) {
	var want []string
	for i := range 4000 {
		want = append(want, strings.Repeat(string(rune('a'+i%26)), 1+i%700))
	}
	want = append(want, strings.Repeat("z", packChunk+1), "after the large one")
	got := slices.Clone(want)
	var p packer
	for i := range got {
		p.pack(&got[i])
	}
	p.flush()
	if p.size != packChunk {
		t.Errorf("the last chunk was %d bytes; %d bytes of strings should have grown the chunks to %d", p.size, totalLen(want), packChunk)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("string %d is %d bytes %.20q..., want %d bytes %.20q...", i, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
}

func totalLen(ss []string) (n int) {
	for _, s := range ss {
		n += len(s)
	}
	return n
}
