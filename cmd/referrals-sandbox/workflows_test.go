package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "github.com/oasdiff/yaml3"
)

// workflow is the part of a GitHub Actions workflow the test reads.
type workflow struct {
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		Steps []workflowStep `yaml:"steps"`
	} `yaml:"jobs"`
	Permissions map[string]string `yaml:"permissions"`
}

// workflowStep is one step: an action or a shell script.
type workflowStep struct {
	Uses string `yaml:"uses"`
	Run  string `yaml:"run"`
}

// pinnedAction is an action at a version tag (owner/repo@vN).
var pinnedAction = regexp.MustCompile(`^[\w.-]+/[\w.-]+@v\d+(\.\d+)*$`)

// runnerTools are the commands a workflow may run that the repository does
// not hold: on GitHub's runners after actions/setup-go, or installed by an
// earlier step (goreleaser).
var runnerTools = map[string]bool{"bash": true, "go": true}

// ciGoreleaserVersion is the GoReleaser .ci/run installs and checks the
// configuration with.
func ciGoreleaserVersion(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^goreleaser_version=(v[\d.]+)$`).FindStringSubmatch(string(repoFile(t, ".ci/run")))
	if m == nil {
		t.Fatal(".ci/run sets no goreleaser_version")
	}
	return m[1]
}

// TestWorkflows parses every workflow and checks that each step's command
// exists: repository files named in run steps are there, tools are the
// runner's or installed by an earlier step, actions are pinned, and the
// release uses the GoReleaser version CI validated the configuration with.
func TestWorkflows(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", ".github", "workflows", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows: %v", err)
	}
	wfs := map[string]workflow{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var wf workflow
		if err := yaml.Unmarshal(data, &wf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		wfs[filepath.Base(f)] = wf
		for name, job := range wf.Jobs {
			if len(job.Steps) == 0 {
				t.Errorf("%s job %s has no steps", f, name)
			}
			installed := map[string]bool{}
			for i, step := range job.Steps {
				switch {
				case step.Uses != "" && !pinnedAction.MatchString(step.Uses):
					t.Errorf("%s job %s step %d: action %q is not pinned to a version", f, name, i, step.Uses)
				case step.Run != "":
					checkRunStep(t, f, step.Run, installed)
				}
			}
		}
	}

	ci, ok := wfs["ci.yml"]
	if !ok || !slices.ContainsFunc(ci.Jobs["test"].Steps, func(s workflowStep) bool { return s.Run == "bash .ci/run" }) {
		t.Errorf("ci.yml does not run bash .ci/run in its test job")
	}
	release, ok := wfs["release.yml"]
	if !ok {
		t.Fatal("no release.yml")
	}
	if release.Permissions["packages"] != "write" || release.Permissions["contents"] != "write" {
		t.Errorf("release.yml permissions %v: pushing to ghcr.io and creating the release need packages and contents write", release.Permissions)
	}
	push, _ := release.On["push"].(map[string]any)
	if tags, _ := push["tags"].([]any); len(tags) != 1 || tags[0] != "v*" {
		t.Errorf("release.yml runs on %v, want a push of a v* tag", release.On)
	}
	data := string(repoFile(t, ".github/workflows/release.yml"))
	if want := "github.com/goreleaser/goreleaser/v2@" + ciGoreleaserVersion(t); !strings.Contains(data, want) {
		t.Errorf("release.yml does not install %s, the version .ci/run checks .goreleaser.yaml with", want)
	}
}

// checkRunStep checks each command line of a run step: the command is a
// runner tool, a tool an earlier step installed, or a repository file;
// every argument that names a repository path exists.
func checkRunStep(t *testing.T, file, script string, installed map[string]bool) {
	t.Helper()
	for _, line := range strings.Split(script, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		cmd := fields[0]
		switch {
		case runnerTools[cmd] || installed[cmd]:
		case strings.Contains(cmd, "/"):
			if _, err := os.Stat(filepath.Join("..", "..", cmd)); err != nil {
				t.Errorf("%s: %q runs %s, which is not in the repository", file, line, cmd)
			}
		default:
			t.Errorf("%s: %q runs %s, which neither the runner nor an earlier step provides", file, line, cmd)
		}
		if cmd == "go" && len(fields) > 2 && fields[1] == "install" {
			mod, _, _ := strings.Cut(fields[2], "@")
			installed[filepath.Base(strings.TrimSuffix(mod, "/v2"))] = true
		}
		for _, arg := range fields[1:] {
			if looksLikeRepoPath(arg) {
				if _, err := os.Stat(filepath.Join("..", "..", arg)); err != nil {
					t.Errorf("%s: %q names %s, which is not in the repository", file, line, arg)
				}
			}
		}
	}
}

// looksLikeRepoPath is an argument naming a file in the repository
// (./x, .ci/run), not a flag, module path or URL.
func looksLikeRepoPath(arg string) bool {
	return strings.HasPrefix(arg, "./") || (strings.HasPrefix(arg, ".") && strings.Contains(arg, "/") && !strings.Contains(arg, "@"))
}

// goreleaserConfig is the part of .goreleaser.yaml the test checks.
type goreleaserConfig struct {
	Builds []struct {
		Main    string   `yaml:"main"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
		Ldflags []string `yaml:"ldflags"`
	} `yaml:"builds"`
	DockersV2 []struct {
		Dockerfile string            `yaml:"dockerfile"`
		Images     []string          `yaml:"images"`
		Platforms  []string          `yaml:"platforms"`
		ExtraFiles []string          `yaml:"extra_files"`
		BuildArgs  map[string]string `yaml:"build_args"`
	} `yaml:"dockers_v2"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
	} `yaml:"checksum"`
}

// TestGoreleaserConfig checks what the release publishes against what the
// issue and docs/ci-and-containers.md promise (`goreleaser check`, in .ci/run, checks the
// schema): three systems on two architectures, checksums, a multi-arch
// ghcr.io image built from those binaries, and files that exist.
func TestGoreleaserConfig(t *testing.T) {
	var c goreleaserConfig
	if err := yaml.Unmarshal(repoFile(t, ".goreleaser.yaml"), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Builds) != 1 || len(c.DockersV2) != 1 {
		t.Fatalf("want one build and one image, got %d and %d", len(c.Builds), len(c.DockersV2))
	}
	b := c.Builds[0]
	slices.Sort(b.Goos)
	slices.Sort(b.Goarch)
	if !slices.Equal(b.Goos, []string{"darwin", "linux", "windows"}) || !slices.Equal(b.Goarch, []string{"amd64", "arm64"}) {
		t.Errorf("targets %v × %v", b.Goos, b.Goarch)
	}
	if _, err := os.Stat(filepath.Join("..", "..", b.Main)); err != nil {
		t.Errorf("main %s: %v", b.Main, err)
	}
	ld := strings.Join(b.Ldflags, " ")
	for _, v := range []string{"main.version=", "main.commit=", "main.date="} {
		if !strings.Contains(ld, v) {
			t.Errorf("ldflags do not set %s: %s", v, ld)
		}
	}
	if c.Checksum.NameTemplate == "" {
		t.Error("no checksum file")
	}
	d := c.DockersV2[0]
	if len(d.Images) != 1 || !strings.HasPrefix(d.Images[0], "ghcr.io/") {
		t.Errorf("images %v, want one on ghcr.io", d.Images)
	}
	if !slices.Equal(d.Platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v", d.Platforms)
	}
	if d.BuildArgs["BINARY"] != "context" {
		t.Errorf("build_args %v: the image must reuse the released binaries (BINARY=context)", d.BuildArgs)
	}
	for _, f := range append([]string{d.Dockerfile}, d.ExtraFiles...) {
		if _, err := os.Stat(filepath.Join("..", "..", f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !slices.Contains(d.ExtraFiles, "image/rootfs.tar") {
		t.Errorf("extra_files %v lack image/rootfs.tar, which the Dockerfile ADDs", d.ExtraFiles)
	}
}

// TestCIFuzzesEveryTarget: .ci/fuzz, which CI runs, lists every fuzz
// target in the module with its package, so that a new target is fuzzed
// in CI and not only run on its seeds: a list kept by hand had already
// missed two.
func TestCIFuzzesEveryTarget(t *testing.T) {
	t.Parallel()
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(Fuzz\w+) (\./[\w./-]*)$`).FindAllStringSubmatch(string(repoFile(t, ".ci/fuzz")), -1) {
		listed[m[1]+" "+m[2]] = true
	}
	target := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(\w+ \*testing\.F\)`)
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, m := range target.FindAllStringSubmatch(string(src), -1) {
			found = append(found, m[1]+" ./"+filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatal("found no fuzz target in the module")
	}
	for _, f := range found {
		if !listed[f] {
			t.Errorf(".ci/fuzz does not run %s", f)
		}
	}
}
