package main

import (
	"bytes"
	"errors"
	"go/build"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	yaml "github.com/oasdiff/yaml3"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
)

// chartDir is the Helm chart, from this package's directory.
const chartDir = "../../deploy/helm/referrals-sandbox"

// helmBinary finds helm on PATH or where `go install` puts it.
func helmBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	p := filepath.Join(build.Default.GOPATH, "bin", "helm")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return testutil.Tool(t, "helm", "HELM_REQUIRED", "go install helm.sh/helm/v3/cmd/helm@v3.22.0")
}

// manifest is one rendered Kubernetes object.
type manifest map[string]any

func (m manifest) get(path ...string) any {
	var v any = map[string]any(m)
	for _, p := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[p]
	}
	return v
}

// renderChart runs helm template with values and returns the objects by
// kind.
func renderChart(t *testing.T, helm string, values ...string) (map[string]manifest, error) {
	t.Helper()
	return renderChartArgs(t, helm, chartDir, setFlags(values)...)
}

// renderChartArgs runs helm template of chart with more arguments (-f
// FILE, --set) and returns the objects by kind.
func renderChartArgs(t *testing.T, helm, chart string, more ...string) (map[string]manifest, error) {
	t.Helper()
	args := append([]string{"template", "qa", chart, "--namespace", "sandbox"}, more...)
	var stderr bytes.Buffer
	cmd := exec.Command(helm, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New(err.Error() + ": " + stderr.String())
	}
	objects := map[string]manifest{}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		// A plain map: decoding into manifest would make every nested map
		// a manifest too, which get does not walk.
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("helm template output: %v\n%s", err, out)
		}
		if m == nil {
			continue
		}
		objects[m["kind"].(string)] = m
	}
	return objects, nil
}

// imageUser is the USER the Dockerfile runs the image as.
func imageUser(t *testing.T) (uid, gid string) {
	t.Helper()
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^USER (\d+):(\d+)\s*$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("no USER uid:gid in the Dockerfile")
	}
	return string(m[1]), string(m[2])
}

// TestHelmChart: helm lint passes, and the rendered Deployment runs the
// binary as the image does: every environment variable is one of serve's
// flags and parses as it, the probes ask the health check the binary
// serves, the ports are the ones it listens on, the admin token and the
// Redis URL come from a Secret, and the security context is the image's
// user on a read-only root with a writable /tmp.
func TestHelmChart(t *testing.T) {
	helm := helmBinary(t)
	values := []string{"adminToken.value=qa-admin-token", "redis.url=redis://:pw@redis:6379/0", "replicaCount=3"}
	lint := exec.Command(helm, append([]string{"lint", chartDir, "--strict"}, setFlags(values)...)...)
	if out, err := lint.CombinedOutput(); err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
	objects, err := renderChart(t, helm, values...)
	if err != nil {
		t.Fatal(err)
	}
	// Every SANDBOX_* the chart names, comments included, is a serve flag's.
	err = filepath.WalkDir(chartDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil {
			checkVarsAreServeFlags(t, p, data)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	deployment := objects["Deployment"]
	if deployment == nil || objects["Service"] == nil || objects["PodDisruptionBudget"] == nil || objects["Secret"] == nil {
		t.Fatalf("rendered kinds %v, want a Deployment, a Service, a PodDisruptionBudget and a Secret", keys(objects))
	}
	if r := deployment.get("spec", "replicas"); r != 3 {
		t.Errorf("replicas %v, want 3", r)
	}
	containers := deployment.get("spec", "template", "spec", "containers").([]any)
	c := manifest(containers[0].(map[string]any))

	ports := map[string]int{}
	for _, p := range c["ports"].([]any) {
		p := p.(map[string]any)
		ports[p["name"].(string)] = p["containerPort"].(int)
	}
	envs := serveEnvVars()
	rendered := map[string]string{}
	for _, e := range c["env"].([]any) {
		e := e.(map[string]any)
		name := e["name"].(string)
		if !envs[name] {
			t.Errorf("env %s is not the variable of any serve flag", name)
		}
		if v, ok := e["value"].(string); ok {
			rendered[name] = v
		} else if ref := manifest(e).get("valueFrom", "secretKeyRef", "name"); ref != nil {
			rendered[name] = "from-secret"
		}
	}
	for _, secret := range []string{"SANDBOX_ADMIN_TOKEN", "SANDBOX_REDIS"} {
		if rendered[secret] != "from-secret" {
			t.Errorf("%s is %q, want it from a Secret", secret, rendered[secret])
		}
	}
	rendered["SANDBOX_REDIS"] = "redis://redis:6379/0"
	o, sc := serveFlags(env{getenv: func(k string) string { return rendered[k] }, stdout: io.Discard})
	if err := o.parse(nil); err != nil {
		t.Fatalf("serve's flags refuse the chart's environment: %v", err)
	}
	if err := sc.check(); err != nil {
		t.Errorf("serve refuses the chart's environment: %v", err)
	}
	if _, port, _ := net.SplitHostPort(sc.addr); port != itoa(ports["http"]) {
		t.Errorf("serve listens on %s, the http containerPort is %d", sc.addr, ports["http"])
	}
	if _, port, _ := net.SplitHostPort(sc.metricsAddr); port != itoa(ports["metrics"]) {
		t.Errorf("--metrics-addr %s, the metrics containerPort is %d", sc.metricsAddr, ports["metrics"])
	}
	for _, probe := range []string{"livenessProbe", "readinessProbe"} {
		if p := c.get(probe, "httpGet", "path"); p != healthPath {
			t.Errorf("%s path %v, want %s", probe, p, healthPath)
		}
		if p := c.get(probe, "httpGet", "port"); p != "http" {
			t.Errorf("%s port %v, want http", probe, p)
		}
	}

	uid, gid := imageUser(t)
	for _, ctx := range []manifest{c, manifest(deployment.get("spec", "template", "spec").(map[string]any))} {
		sctx := manifest(ctx["securityContext"].(map[string]any))
		if sctx["runAsNonRoot"] != true || itoa(sctx["runAsUser"].(int)) != uid || itoa(sctx["runAsGroup"].(int)) != gid {
			t.Errorf("security context %v, want non-root %s:%s as the Dockerfile's USER", sctx, uid, gid)
		}
	}
	if c.get("securityContext", "readOnlyRootFilesystem") != true || c.get("securityContext", "allowPrivilegeEscalation") != false {
		t.Errorf("container security context %v, want a read-only root and no privilege escalation", c["securityContext"])
	}
	mounted := false
	for _, m := range c["volumeMounts"].([]any) {
		mounted = mounted || m.(map[string]any)["mountPath"] == "/tmp"
	}
	if !mounted {
		t.Error("/tmp is not mounted: with a read-only root the health file and --tls's CA have nowhere to go")
	}
	if got := objects["PodDisruptionBudget"].get("spec", "selector", "matchLabels"); !equalYAML(got, deployment.get("spec", "selector", "matchLabels")) {
		t.Errorf("the PodDisruptionBudget selects %v, the Deployment's pods are %v", got, deployment.get("spec", "selector", "matchLabels"))
	}

	for _, bad := range [][]string{{"adminToken.value=t", "replicaCount=2"}} {
		if _, err := renderChart(t, helm, bad...); err == nil {
			t.Errorf("helm template %v rendered; want a refusal", bad)
		}
	}
}

// TestHelmChartEnvironmentServes starts the binary with the chart's
// environment (one replica, no Redis) and asks the probes' path and the
// metrics port, as the kubelet and Prometheus would.
func TestHelmChartEnvironmentServes(t *testing.T) {
	helm := helmBinary(t)
	objects, err := renderChart(t, helm, "adminToken.value=qa-admin-token", "replicaCount=1")
	if err != nil {
		t.Fatal(err)
	}
	c := manifest(objects["Deployment"].get("spec", "template", "spec", "containers").([]any)[0].(map[string]any))
	addr, metricsAddr := "127.0.0.1:"+closedPort(t), "127.0.0.1:"+closedPort(t)
	environ := []string{"SANDBOX_ADMIN_TOKEN=qa-admin-token"}
	for _, e := range c["env"].([]any) {
		e := e.(map[string]any)
		v, ok := e["value"].(string)
		if !ok {
			continue
		}
		switch e["name"] {
		case "SANDBOX_ADDR":
			v = addr // the pod's 0.0.0.0:8080, on a free loopback port
		case "SANDBOX_METRICS_ADDR":
			v = metricsAddr
		}
		environ = append(environ, e["name"].(string)+"="+v)
	}
	s := startServer(t, t.TempDir(), environ)
	s.lineContaining(t, "referrals-sandbox ready")
	probe := c.get("readinessProbe", "httpGet", "path").(string)
	if status, body := httpGet(t, "http://"+addr+probe); status != http.StatusOK {
		t.Errorf("GET %s: %d %s", probe, status, body)
	}
	if status, body := httpGet(t, "http://"+metricsAddr+"/metrics"); status != http.StatusOK || !strings.Contains(body, "referrals_sandbox_build_info") {
		t.Errorf("GET /metrics on the metrics port: %d", status)
	}
}

func setFlags(values []string) []string {
	var out []string
	for _, v := range values {
		out = append(out, "--set", v)
	}
	return out
}

func keys(m map[string]manifest) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

func equalYAML(a, b any) bool {
	x, _ := yaml.Marshal(a)
	y, _ := yaml.Marshal(b)
	return bytes.Equal(x, y)
}
