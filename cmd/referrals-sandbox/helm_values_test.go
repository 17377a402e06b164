package main

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "github.com/oasdiff/yaml3"
)

// chartMeta is the part of Chart.yaml the tests read.
type chartMeta struct {
	Version    string `yaml:"version"`
	AppVersion string `yaml:"appVersion"`
}

// releaseVersion is a release's version: never a moving tag like latest.
var releaseVersion = regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

// containerOf is the Deployment's one container.
func containerOf(t *testing.T, objects map[string]manifest) manifest {
	t.Helper()
	d := objects["Deployment"]
	if d == nil {
		t.Fatalf("no Deployment among %v", keys(objects))
	}
	return manifest(d.get("spec", "template", "spec", "containers").([]any)[0].(map[string]any))
}

// envValue is the plain value of the container's variable name ("" when
// absent or from a Secret).
func envValue(c manifest, name string) (string, bool) {
	for _, e := range c["env"].([]any) {
		e := e.(map[string]any)
		if e["name"] == name {
			v, _ := e["value"].(string)
			return v, true
		}
	}
	return "", false
}

// TestHelmChartDefaults: `helm install` with the chart's defaults works:
// one replica without Redis, an admin token generated into the chart's
// Secret, and the image pinned to the chart's appVersion, a release
// version, so that every node runs the same build.
func TestHelmChartDefaults(t *testing.T) {
	helm := helmBinary(t)
	if out, err := exec.Command(helm, "lint", "--strict", chartDir).CombinedOutput(); err != nil {
		t.Fatalf("helm lint with the defaults: %v\n%s", err, out)
	}
	objects, err := renderChart(t, helm)
	if err != nil {
		t.Fatalf("helm template with the defaults: %v", err)
	}
	var meta chartMeta
	if err := yaml.Unmarshal(repoFile(t, "deploy/helm/referrals-sandbox/Chart.yaml"), &meta); err != nil {
		t.Fatal(err)
	}
	if !releaseVersion.MatchString(meta.AppVersion) {
		t.Errorf("appVersion %q is not a release version: with pullPolicy IfNotPresent, nodes would run whichever build they cached", meta.AppVersion)
	}
	c := containerOf(t, objects)
	if image := c["image"]; image != "ghcr.io/referrals-sandbox/referrals-sandbox:"+meta.AppVersion {
		t.Errorf("image %v, want the chart's appVersion %s", image, meta.AppVersion)
	}
	if r := objects["Deployment"].get("spec", "replicas"); r != 1 {
		t.Errorf("replicas %v, want 1 (more need Redis)", r)
	}
	if _, ok := envValue(c, "SANDBOX_REDIS"); ok {
		t.Error("SANDBOX_REDIS set without a Redis")
	}
	secret := objects["Secret"]
	if secret == nil {
		t.Fatalf("no Secret rendered; kinds %v", keys(objects))
	}
	token, _ := secret.get("data", "admin-token").(string)
	decoded, err := base64.StdEncoding.DecodeString(token)
	if err != nil || len(decoded) < 32 {
		t.Errorf("the generated admin token is %d bytes (%v), want at least 32", len(decoded), err)
	}
	if again, _ := renderChart(t, helm); again["Secret"].get("data", "admin-token") == token {
		t.Error("two renders generated the same admin token: it is not random")
	}
	// A given token is kept as given.
	given, err := renderChart(t, helm, "adminToken.value=qa-admin-token")
	if err != nil {
		t.Fatal(err)
	}
	if got := given["Secret"].get("data", "admin-token"); got != base64.StdEncoding.EncodeToString([]byte("qa-admin-token")) {
		t.Errorf("adminToken.value rendered as %v", got)
	}
	if objects["Ingress"] != nil {
		t.Error("an Ingress by default")
	}
	// The token survives upgrades: the template reads the installed
	// Secret back (helm template has no cluster to try it on).
	if tpl := string(repoFile(t, "deploy/helm/referrals-sandbox/templates/secret.yaml")); !strings.Contains(tpl, `lookup "v1" "Secret"`) {
		t.Error("secret.yaml does not look up the installed Secret: an upgrade would change the admin token")
	}
}

// TestHelmChartIngress: the optional Ingress routes its host to the
// Service's http port, and the host becomes the public URL (https with
// TLS) unless publicURL says otherwise.
func TestHelmChartIngress(t *testing.T) {
	helm := helmBinary(t)
	objects, err := renderChart(t, helm, "ingress.enabled=true", "ingress.host=sandbox.example.org", "ingress.tls[0].secretName=sandbox-tls", "ingress.className=nginx")
	if err != nil {
		t.Fatal(err)
	}
	ing := objects["Ingress"]
	if ing == nil {
		t.Fatalf("no Ingress; kinds %v", keys(objects))
	}
	rule := manifest(ing.get("spec", "rules").([]any)[0].(map[string]any))
	backend := manifest(rule.get("http", "paths").([]any)[0].(map[string]any))
	if rule["host"] != "sandbox.example.org" || backend.get("backend", "service", "name") != objects["Service"].get("metadata", "name") || backend.get("backend", "service", "port", "name") != "http" {
		t.Errorf("Ingress rule %v does not route sandbox.example.org to the Service's http port", rule)
	}
	if ing.get("spec", "ingressClassName") != "nginx" {
		t.Errorf("ingressClassName %v", ing.get("spec", "ingressClassName"))
	}
	if v, _ := envValue(containerOf(t, objects), "SANDBOX_PUBLIC_URL"); v != "https://sandbox.example.org" {
		t.Errorf("SANDBOX_PUBLIC_URL %q, want https://sandbox.example.org", v)
	}
	objects, err = renderChart(t, helm, "ingress.enabled=true", "publicURL=https://partners.example.org/sandbox")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := envValue(containerOf(t, objects), "SANDBOX_PUBLIC_URL"); v != "https://partners.example.org/sandbox" {
		t.Errorf("SANDBOX_PUBLIC_URL %q, want publicURL's", v)
	}
}

// TestHelmChartValuesFiles lints and renders the chart with each values
// file it ships, as .ci/run does, and checks that docs/helm.md shows each.
func TestHelmChartValuesFiles(t *testing.T) {
	helm := helmBinary(t)
	files, err := filepath.Glob(filepath.Join(chartDir, "values-*.yaml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("values files %v (%v), want values-minimal.yaml and values-redis.yaml at least", files, err)
	}
	doc := string(repoFile(t, "docs/helm.md"))
	ci := string(repoFile(t, ".ci/run"))
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(doc, name) {
				t.Errorf("docs/helm.md does not show %s", name)
			}
			if out, err := exec.Command(helm, "lint", "--strict", chartDir, "-f", f).CombinedOutput(); err != nil {
				t.Fatalf("helm lint -f %s: %v\n%s", name, err, out)
			}
			objects, err := renderChartArgs(t, helm, chartDir, "-f", f)
			if err != nil {
				t.Fatalf("helm template -f %s: %v", name, err)
			}
			c := containerOf(t, objects)
			if replicas := objects["Deployment"].get("spec", "replicas").(int); replicas > 1 {
				if _, ok := envValue(c, "SANDBOX_REDIS"); !ok {
					t.Errorf("%d replicas without SANDBOX_REDIS", replicas)
				}
			}
		})
	}
	if !strings.Contains(ci, "values-*.yaml") {
		t.Error(".ci/run does not render the chart with each values file")
	}
}

// TestHelmChartPackage: the release's chart (deploy/helm/package, a
// GoReleaser before hook) carries the release's version as version and
// appVersion, so it deploys the image that release pushes.
func TestHelmChartPackage(t *testing.T) {
	helm := helmBinary(t)
	out := t.TempDir()
	cmd := exec.Command("bash", filepath.Join("..", "..", "deploy", "helm", "package"), "9.8.7")
	cmd.Env = append(os.Environ(), "HELM_PACKAGE_DIR="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy/helm/package: %v\n%s", err, b)
	}
	objects, err := renderChartArgs(t, helm, filepath.Join(out, "referrals-sandbox-9.8.7.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	if image := containerOf(t, objects)["image"]; image != "ghcr.io/referrals-sandbox/referrals-sandbox:9.8.7" {
		t.Errorf("the packaged chart deploys %v, want the release's 9.8.7", image)
	}
	if l := objects["Deployment"].get("metadata", "labels", "helm.sh/chart"); l != "referrals-sandbox-9.8.7" {
		t.Errorf("chart label %v, want version 9.8.7", l)
	}
	var release struct {
		Before struct {
			Hooks []string `yaml:"hooks"`
		} `yaml:"before"`
		Release struct {
			ExtraFiles []struct {
				Glob string `yaml:"glob"`
			} `yaml:"extra_files"`
		} `yaml:"release"`
	}
	if err := yaml.Unmarshal(repoFile(t, ".goreleaser.yaml"), &release); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(release.Before.Hooks, "bash deploy/helm/package {{ .Version }}") {
		t.Errorf("no GoReleaser hook packages the chart with the release's version: %q", release.Before.Hooks)
	}
	if !slices.ContainsFunc(release.Release.ExtraFiles, func(f struct {
		Glob string `yaml:"glob"`
	}) bool {
		return f.Glob == "build/helm/referrals-sandbox-*.tgz"
	}) {
		t.Error("the release does not attach the packaged chart")
	}
}
