package main

import (
	"slices"
	"strings"
	"testing"

	yaml "github.com/oasdiff/yaml3"
)

// TestOpenSourceFiles: the repository carries what a company's legal and
// security review looks for: the Apache-2.0 licence in full (the image's
// licence label says the same), a security policy with a private channel
// and the promises about secrets and patient data, and a changelog with
// an Unreleased section; the release archives carry all three.
func TestOpenSourceFiles(t *testing.T) {
	license := string(repoFile(t, "LICENSE"))
	for _, want := range []string{"Apache License", "Version 2.0, January 2004", "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION", "END OF TERMS AND CONDITIONS"} {
		if !strings.Contains(license, want) {
			t.Errorf("LICENSE is not the full Apache-2.0 text: it lacks %q", want)
		}
	}
	if !strings.Contains(string(repoFile(t, "Dockerfile")), `org.opencontainers.image.licenses="Apache-2.0"`) {
		t.Error("the Dockerfile's org.opencontainers.image.licenses label is not Apache-2.0")
	}

	security := strings.Join(strings.Fields(string(repoFile(t, "SECURITY.md"))), " ") // lines rewrapped
	for _, want := range []string{"private vulnerability reporting", "(docs/security.md)", "patient data", "Secrets and tokens never appear"} {
		if !strings.Contains(security, want) {
			t.Errorf("SECURITY.md lacks %q", want)
		}
	}
	if !strings.Contains(string(repoFile(t, "CHANGELOG.md")), "\n## Unreleased\n") {
		t.Error("CHANGELOG.md has no ## Unreleased section")
	}

	var release struct {
		Archives []struct {
			Files []string `yaml:"files"`
		} `yaml:"archives"`
	}
	if err := yaml.Unmarshal(repoFile(t, ".goreleaser.yaml"), &release); err != nil || len(release.Archives) == 0 {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	for _, f := range []string{"LICENSE", "SECURITY.md", "CHANGELOG.md"} {
		if !slices.Contains(release.Archives[0].Files, f) {
			t.Errorf("the release archives do not carry %s: %v", f, release.Archives[0].Files)
		}
	}
}
