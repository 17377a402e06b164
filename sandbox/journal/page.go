package journal

// Page bounds of GET /__sandbox/requests: one answer stays bounded
// however large the journal and its entries are.
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 1000
	// MaxPageBytes bounds the Size of a page's entries: a page holds at
	// least one entry, and further ones only while their sizes sum to at
	// most this. With MaxEntryBytes, a page's JSON stays well under what
	// the CLI reads (4 MiB), whatever the entries hold.
	MaxPageBytes = 2 << 20
)

// pageLimit applies the page size bounds.
func pageLimit(limit int) int {
	switch {
	case limit < 1:
		return DefaultPageLimit
	case limit > MaxPageLimit:
		return MaxPageLimit
	}
	return limit
}

// fitsPage reports whether an entry of size bytes joins a page that holds
// n entries of bytes in all, within limit entries and maxBytes (no byte
// bound when maxBytes < 0); the first entry always does, so a walk always
// moves on.
func fitsPage(n int, bytes, size int64, limit int, maxBytes int64) bool {
	return n < limit && (n == 0 || maxBytes < 0 || bytes+size <= maxBytes)
}
