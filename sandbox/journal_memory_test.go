package sandbox_test

import (
	"runtime"
	"strings"
	"testing"
)

// TestJournalKeepsNoRequestLine: a journal entry counts a few hundred
// bytes for a request with a 60 KB path, and must hold no more: net/http
// hands out the method as a slice of the request line, so an entry that
// kept it as is kept the whole line alive (5,000 such requests took the
// sandbox to 711 MB). Not parallel: it reads the process's heap.
func TestJournalKeepsNoRequestLine(t *testing.T) {
	s := newSandbox(t)
	long := "/api/v1/referrals" + strings.Repeat("/"+strings.Repeat("x", 1023), 60)
	const requests = 100
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := int64(ms.HeapAlloc)
	for range requests {
		s.do(request{path: long, plain: true})
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	grown := int64(ms.HeapAlloc) - before
	// Each entry holds its path cut to 1 KB and a few headers: far under
	// 8 KB. Keeping the request lines would be 60 KB each.
	if perRequest := grown / requests; perRequest > 8<<10 {
		t.Errorf("the heap grew %d KB per journaled request with a 60 KB path; an entry should hold a few KB", perRequest>>10)
	}
}
