package store

import (
	"path/filepath"
	"testing"
)

// CheckDamage exposes checkDamage to the benchmarks of package store_test.
var CheckDamage = checkDamage

// Backings are the ways the embedded store keeps its records, for tests
// that run on each: BackingPath gives the path to open one at.
var Backings = []string{"memory", "file"}

// BackingPath is where a test opens the embedded store of the backing
// kind: in memory, or a new data file in a directory of t's.
func BackingPath(t testing.TB, kind string) string {
	if kind == "file" {
		return filepath.Join(t.TempDir(), "data.db")
	}
	return MemoryPath
}

// openBacking opens the embedded store of the backing kind (see
// BackingPath) and returns it with its path; the caller closes it.
func openBacking(t testing.TB, kind string) (*BuntStore, string) {
	t.Helper()
	path := BackingPath(t, kind)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}
