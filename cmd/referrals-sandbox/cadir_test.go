package main

import (
	"path/filepath"
	"testing"
)

// TestChooseCADir: HTTPS on the default port uses --ca-dir (a failure
// there is an error), else the user's configuration directory (a failure
// there is a warning and plain HTTP); --https=false and --tls use none.
func TestChooseCADir(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	for _, tt := range []struct {
		name     string
		c        serveConfig
		dir      string
		optional bool
	}{
		{"default", serveConfig{https: true}, filepath.Join(config, "referrals-sandbox"), true},
		{"--ca-dir", serveConfig{https: true, caDir: "/srv/ca"}, "/srv/ca", false},
		{"--https=false", serveConfig{https: false, caDir: "/srv/ca"}, "", false},
		{"--tls", func() serveConfig { c := serveConfig{https: true}; c.opts.TLS = true; return c }(), "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			if err := c.chooseCADir(); err != nil {
				t.Fatal(err)
			}
			if c.opts.CADir != tt.dir || c.opts.CADirOptional != tt.optional {
				t.Errorf("CA dir %q (optional %v), want %q (optional %v)", c.opts.CADir, c.opts.CADirOptional, tt.dir, tt.optional)
			}
		})
	}
}
