package journal

import "testing"

func TestClearClientKeepsOthersInOrder(t *testing.T) {
	forEachImpl(t, testClearClientKeepsOthersInOrder)
}

func testClearClientKeepsOthersInOrder(t *testing.T, im impl) {
	for _, size := range []int{3, 4, 10} {
		j := im.newLog(size, DefaultMaxBytes)
		for _, c := range []string{"a", "b", "a", "b", "c"} {
			j.Add(Entry{ClientID: c})
		}
		before := j.Find(Filter{})
		j.ClearClient("a")
		var want []Entry
		for _, e := range before {
			if e.ClientID != "a" {
				want = append(want, e)
			}
		}
		got := j.Find(Filter{})
		if len(got) != len(want) {
			t.Fatalf("size %d: %d entries left, want %d", size, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].ClientID != want[i].ClientID {
				t.Errorf("size %d: entry %d is %+v, want %+v", size, i, got[i], want[i])
			}
		}
		j.Add(Entry{ClientID: "d"}) // the ring goes on after a partial clear
		if got := j.Find(Filter{}); got[len(got)-1].ClientID != "d" || got[len(got)-1].ID != 6 {
			t.Errorf("size %d: entry after clear: %+v", size, got[len(got)-1])
		}
		var sum int64
		kept := j.Find(Filter{})
		for _, e := range kept {
			sum += e.Size()
		}
		if n, bytes := j.Usage(); n != len(kept) || bytes != sum {
			t.Errorf("size %d: Usage says %d entries, %d bytes; they are %d, %d bytes", size, n, bytes, len(kept), sum)
		}
	}
}
