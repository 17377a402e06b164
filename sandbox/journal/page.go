package journal

// Page size bounds of GET /__sandbox/requests: one answer stays bounded
// however large the journal is.
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 1000
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
