package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionFallsBackToBuildInfo(t *testing.T) {
	stamped := &debug.BuildInfo{
		Main: debug.Module{Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "feedface"},
			{Key: "vcs.time", Value: "2026-05-06T07:08:09Z"},
		},
	}
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"go install @version", stamped, true, "referrals-sandbox v1.4.0 (commit feedface, built 2026-05-06T07:08:09Z)"},
		{"go build in a clone", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "referrals-sandbox dev (commit unknown, built unknown)"},
		{"no build info", nil, false, "referrals-sandbox dev (commit unknown, built unknown)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := currentVersion(buildVersion{}, tc.info, tc.ok).String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestVersionLdflagsWin: what the Dockerfile and GoReleaser stamp beats
// what the toolchain recorded.
func TestVersionLdflagsWin(t *testing.T) {
	stamped := buildVersion{"v2.0.0", "c0ffee", "2026-07-08T09:10:11Z"}
	info := &debug.BuildInfo{Main: debug.Module{Version: "v1.0.0"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "other"}}}
	if got := currentVersion(stamped, info, true).String(); got != "referrals-sandbox v2.0.0 (commit c0ffee, built 2026-07-08T09:10:11Z)" {
		t.Errorf("got %q", got)
	}
}
