package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// checkDefaultBuild runs the CI page's build with a registry (`podman
// build --format docker -t referrals-sandbox .`, BINARY left at its
// default) with --pull=never, since no registry is reachable here. The
// build must get as far as the Go image: it either builds (the Go image
// is in local storage) or stops for want of docker.io/library/golang.
// Buildah 1.28 (Podman 4.3) used to stop before that, resolving `FROM
// ${BINARY}` without the ARG's default and looking for an image named
// "build".
func (img imageUnderTest) checkDefaultBuild(t *testing.T) {
	var flags []string
	for _, line := range consoleLines(strings.Join(ciPageBlocks(t, "# In CI and containers", "console"), "")) {
		if len(line) > 2 && line[0] == "podman" && line[1] == "build" && !slices.Contains(line, "--pull=never") {
			flags = line[2:]
			break
		}
	}
	if n := len(flags); n < 3 || !slices.Equal(flags[n-3:], []string{"-t", "referrals-sandbox", "."}) {
		t.Fatalf("the CI page's podman build with a registry is %q, want one ending -t referrals-sandbox .", flags)
	}
	if slices.ContainsFunc(flags, func(f string) bool { return strings.HasPrefix(f, "BINARY=") }) {
		t.Fatalf("the CI page's build with a registry sets BINARY: %q", flags)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tag := "localhost/" + uniqueName(t, "referrals-sandbox-default-build") + ":test"
	t.Cleanup(func() { img.p.cleanup(t, "rmi", "-f", tag) })
	args := append([]string{"build", "--pull=never"}, flags[:len(flags)-3]...)
	out, code, stderr := img.p.try(t, append(args, "-f", filepath.Join(root, "Dockerfile"), "-t", tag, root)...)
	switch {
	case strings.Contains(stderr, "short-name") || strings.Contains(stderr, `"build"`):
		t.Errorf("the build looked for an image named build instead of the build stage:\n%s", stderr)
	case code != 0 && !strings.Contains(stderr, "docker.io/library/golang"):
		t.Errorf("the build failed before the Go image: exit %d\n%s\n%s", code, out, stderr)
	case code != 0:
		t.Logf("stopped at the Go image, as it should without a registry: %s", lastLine(stderr))
	}
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
