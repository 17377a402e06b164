package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Set at build time by the Dockerfile and GoReleaser:
//
//	-ldflags "-X main.version=v1.2.3 -X main.commit=abc1234 -X main.date=2026-01-02T03:04:05Z"
//
// Empty ones fall back to what the Go toolchain recorded (buildInfo).
var version, commit, date string

// buildVersion is what `referrals-sandbox version` prints.
type buildVersion struct{ version, commit, date string }

// currentVersion takes the stamped (ldflags) values first; a binary built
// without them (`go install ...@v1.2.3`, `go build` in a clone) reports the
// module version and the VCS revision and time the toolchain recorded, when
// it did.
func currentVersion(stamped buildVersion, info *debug.BuildInfo, ok bool) buildVersion {
	v := stamped
	if ok {
		if v.version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v.version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && v.commit == "":
				v.commit = s.Value
			case s.Key == "vcs.time" && v.date == "":
				v.date = s.Value
			}
		}
	}
	if v.version == "" {
		v.version = "dev"
	}
	if v.commit == "" {
		v.commit = "unknown"
	}
	if v.date == "" {
		v.date = "unknown"
	}
	return v
}

func (v buildVersion) String() string {
	return fmt.Sprintf("referrals-sandbox %s (commit %s, built %s)", v.version, v.commit, v.date)
}

func runVersion(_ context.Context, e env, args []string) error {
	o := newOptions("version", "Print the version, the commit it was built from and the build date.", e.getenv, e.stdout)
	if err := o.parse(args); err != nil {
		return err
	}
	info, ok := debug.ReadBuildInfo()
	fmt.Fprintln(e.stdout, currentVersion(buildVersion{version, commit, date}, info, ok))
	return nil
}
