package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestCollectLessWhileOpening: GOGC is raised while the sandbox opens a
// data file that holds records and restored after; a new data file or
// none (a start that loads fixtures) and a GOGC the operator set are left
// alone. Not parallel: GOGC is the process's.
func TestCollectLessWhileOpening(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	dir := t.TempDir()
	held := filepath.Join(dir, "held.db")
	if err := os.WriteFile(held, []byte("*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name           string
		dataFile       string
		set, whileOpen int
	}{
		{"data file with records", held, 100, openGCPercent},
		{"no data file", "", 100, 100},
		{"empty data file", empty, 100, 100},
		{"data file not yet created", filepath.Join(dir, "new.db"), 100, 100},
		{"operator's lower GOGC", held, 50, 50},
		{"operator's higher GOGC", held, 800, 800},
		{"GOGC=off", held, -1, -1},
	} {
		debug.SetGCPercent(tc.set)
		restore := collectLessWhileOpening(tc.dataFile)
		if got := debug.SetGCPercent(tc.whileOpen); got != tc.whileOpen {
			t.Errorf("%s: GOGC %d while opening, want %d", tc.name, got, tc.whileOpen)
		}
		restore()
		if got := debug.SetGCPercent(tc.set); got != tc.set {
			t.Errorf("%s: GOGC %d after opening, want %d back", tc.name, got, tc.set)
		}
	}
}
