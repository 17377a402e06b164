package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Every POST target's script is found from within the module, whatever the
// directory below the root, and outside the module the target fails
// instead of profiling GETs.
func TestWrkScriptFoundOrRefused(t *testing.T) {
	for name, tg := range targets() {
		if tg.script == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Chdir("../benchrun") // a directory of the module other than its root
			got, err := wrkScript(tg.script)
			if err != nil {
				t.Fatalf("from bench/benchrun: %v", err)
			}
			if _, err := os.Stat(got); err != nil || !filepath.IsAbs(got) {
				t.Errorf("wrkScript(%q) = %q (%v): want an absolute path that is there", tg.script, got, err)
			}
			t.Chdir(t.TempDir())
			if got, err := wrkScript(tg.script); err == nil {
				t.Errorf("outside the module: %q and no error", got)
			}
		})
	}
}
