package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestArchitectureMapsEveryPackage: docs/architecture.md is the map a
// newcomer reads first, so it names every package of the module and every
// file of the root package sandbox, and a package or file added without
// its line fails here rather than leaving the map behind.
func TestArchitectureMapsEveryPackage(t *testing.T) {
	t.Parallel()
	doc := string(repoFile(t, "docs/architecture.md"))
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^ *([\w./-]+?)/? {2,}`).FindAllStringSubmatch(doc, -1) {
		named[strings.TrimSuffix(m[1], "/")] = true
	}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
			return filepath.SkipDir // another module (examples/testcontainers)
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == "." || !hasGoSource(t, path) || strings.HasPrefix(rel, "examples") || strings.HasPrefix(rel, "bench") {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !named[rel] && !coveredByParent(named, rel) {
			t.Errorf("docs/architecture.md does not name package %s", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "sandbox", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		base := filepath.Base(f)
		if !strings.HasSuffix(base, "_test.go") && !strings.Contains(doc, base) {
			t.Errorf("docs/architecture.md does not name the root package's file %s", base)
		}
	}
}

// hasGoSource reports whether dir holds a Go file that is not a test.
func hasGoSource(t *testing.T, dir string) bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			return true
		}
	}
	return false
}

// coveredByParent reports whether a parent of rel is named and rel is one
// of its helper packages (a conformance suite such as sandbox/store/storetest),
// which the parent's line names.
func coveredByParent(named map[string]bool, rel string) bool {
	parent, child := filepath.Split(rel)
	return strings.HasSuffix(child, "test") && named[strings.TrimSuffix(parent, "/")]
}
