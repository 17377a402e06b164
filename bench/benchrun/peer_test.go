package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestPeerEntry: the peer figure is left out (errNoPeer, which the run
// logs and goes on without) unless --peer names a directory holding
// oauth2-mock-server 9.3.0; nothing is ever installed.
func TestPeerEntry(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		if _, err := peerEntry(t.TempDir()); !errors.Is(err, errNoPeer) {
			t.Fatalf("without node: %v, want errNoPeer", err)
		}
		t.Skip("node is not installed: only the skip is checked")
	}
	install := func(version string) string {
		dir := t.TempDir()
		pkg := filepath.Join(dir, "node_modules", peerPackage)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		meta := `{"name":"oauth2-mock-server","version":"` + version + `","main":"./dist/index.mjs"}`
		if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, tc := range []struct{ name, dir string }{
		{"no --peer", ""},
		{"not installed", t.TempDir()},
		{"another version", install("8.0.0")},
	} {
		if _, err := peerEntry(tc.dir); !errors.Is(err, errNoPeer) {
			t.Errorf("%s: %v, want errNoPeer", tc.name, err)
		}
	}
	dir := install(peerVersion)
	got, err := peerEntry(dir)
	if want := filepath.Join(dir, "node_modules", peerPackage, "dist", "index.mjs"); err != nil || got != want {
		t.Errorf("installed: %q, %v; want %q", got, err, want)
	}
}
