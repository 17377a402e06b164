package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "github.com/oasdiff/yaml3"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// repoFile is a file at the module root, two levels above this package.
func repoFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// serveEnvVars is the environment variable of every serve flag.
func serveEnvVars() map[string]bool {
	o, _ := serveFlags(env{stdout: io.Discard, stderr: io.Discard, getenv: mapGetenv(nil)})
	vars := map[string]bool{}
	o.fs.VisitAll(func(f *flag.Flag) { vars[o.envOf(f.Name)] = true })
	return vars
}

var sandboxVarPattern = regexp.MustCompile(`SANDBOX_[A-Z0-9_]+`)

// checkVarsAreServeFlags fails for every SANDBOX_* name in text, comments
// included, that no serve flag reads.
func checkVarsAreServeFlags(t *testing.T, file string, text []byte) {
	t.Helper()
	known := serveEnvVars()
	for _, name := range sandboxVarPattern.FindAllString(string(text), -1) {
		if !known[name] {
			t.Errorf("%s names %s, which no serve flag reads", file, name)
		}
	}
}

// checkServeEnvironment parses serve's flags from environ alone and runs
// serve's checks on them, as the container's serve would at start.
func checkServeEnvironment(t *testing.T, what string, environ map[string]string) *serveConfig {
	t.Helper()
	o, c := serveFlags(env{stdout: io.Discard, stderr: io.Discard, getenv: mapGetenv(environ)})
	if err := o.parse(nil); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := c.check(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if _, err := newLogger(io.Discard, c.logFormat, c.logLevel); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return c
}

// checkCommandLine fails unless args (after the binary) is a subcommand
// with flags it knows: the same line with --help must exit 0.
func checkCommandLine(t *testing.T, what string, args []string) {
	t.Helper()
	if len(args) == 0 {
		t.Fatalf("%s: no subcommand", what)
	}
	if !slices.ContainsFunc(commands(), func(c command) bool { return c.name == args[0] }) {
		t.Fatalf("%s: %q is not a subcommand", what, args[0])
	}
	if res := runCLI(t, nil, append(slices.Clone(args), "--help")...); res.code != 0 {
		t.Errorf("%s: %v is not a valid command line: %s", what, args, res.stderr)
	}
}

func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return p
}

// dockerfile is the parsed Dockerfile: instructions in order, continuation
// lines joined, comments dropped.
type dockerfile []instruction

type instruction struct{ keyword, args string }

func parseDockerfile(t *testing.T, data []byte) dockerfile {
	t.Helper()
	var out dockerfile
	var pending string
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && pending == "") {
			continue
		}
		if rest, ok := strings.CutSuffix(trimmed, "\\"); ok {
			pending += rest + " "
			continue
		}
		full := pending + trimmed
		pending = ""
		keyword, args, _ := strings.Cut(full, " ")
		out = append(out, instruction{strings.ToUpper(keyword), strings.TrimSpace(args)})
	}
	return out
}

// all returns the arguments of every instruction with keyword.
func (d dockerfile) all(keyword string) []string {
	var args []string
	for _, in := range d {
		if in.keyword == keyword {
			args = append(args, in.args)
		}
	}
	return args
}

// one returns the arguments of the only instruction with keyword after the
// last FROM (the final image).
func (d dockerfile) final(t *testing.T, keyword string) string {
	t.Helper()
	last := -1
	for i, in := range d {
		if in.keyword == "FROM" {
			last = i
		}
	}
	var found []string
	for _, in := range d[last+1:] {
		if in.keyword == keyword {
			found = append(found, in.args)
		}
	}
	if len(found) != 1 {
		t.Fatalf("final stage has %d %s instructions, want 1", len(found), keyword)
	}
	return found[0]
}

// execForm decodes an exec-form JSON array.
func execForm(t *testing.T, what, s string) []string {
	t.Helper()
	var args []string
	if err := json.Unmarshal([]byte(s), &args); err != nil || len(args) == 0 {
		t.Fatalf("%s is not in exec form (a JSON array; the image has no shell): %q", what, s)
	}
	return args
}

// imageEnv is the final stage's ENV as a map.
func (d dockerfile) imageEnv(t *testing.T) map[string]string {
	t.Helper()
	environ := map[string]string{}
	for _, args := range d.all("ENV") {
		for _, kv := range strings.Fields(args) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("ENV %q: use the KEY=value form", args)
			}
			environ[k] = strings.Trim(v, `"`)
		}
	}
	return environ
}

func goLineVersion(t *testing.T) string {
	t.Helper()
	for _, line := range strings.Split(string(repoFile(t, "go.mod")), "\n") {
		if v, ok := strings.CutPrefix(line, "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("go.mod has no go line")
	return ""
}

func TestDockerfile(t *testing.T) {
	data := repoFile(t, "Dockerfile")
	checkVarsAreServeFlags(t, "Dockerfile", data)
	d := parseDockerfile(t, data)

	// Stages: the Go build (a fully qualified image: Podman refuses short
	// names), the binary built outside, the one BINARY selects (with its
	// default repeated: Buildah, as in Podman 4.x, resolves the stage
	// without the global ARG's default and otherwise looks for an image
	// named "build" in a registry), the image.
	froms := d.all("FROM")
	wantFroms := []string{"docker.io/library/golang:${GO_VERSION} AS build", "scratch AS context", "${BINARY:-build} AS binary", "scratch"}
	if !slices.Equal(froms, wantFroms) {
		t.Fatalf("FROM %q, want %q", froms, wantFroms)
	}
	args := d.all("ARG")
	if !slices.Contains(args, "BINARY=build") {
		t.Errorf("ARG BINARY=build missing: a plain `docker build .` must compile in the Go image; ARGs %q", args)
	}
	// The builder's Go is the go line's minor release (golang:1.26 is the
	// newest 1.26.x, so it satisfies go 1.26.8).
	goLine := goLineVersion(t)
	minor := strings.Join(strings.SplitN(goLine, ".", 3)[:2], ".")
	if !slices.Contains(args, "GO_VERSION="+minor) {
		t.Errorf("ARG GO_VERSION is not %s (go.mod says go %s): %q", minor, goLine, args)
	}
	build := strings.Join(d.all("RUN"), "\n")
	for _, want := range []string{"CGO_ENABLED=0", "go build", "-trimpath", `-ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}"`, "./cmd/referrals-sandbox"} {
		if !strings.Contains(build, want) {
			t.Errorf("the build does not use %s:\n%s", want, build)
		}
	}
	if !slices.Contains(d.all("COPY"), "${TARGETPLATFORM}/referrals-sandbox /out/referrals-sandbox") {
		t.Errorf("the context stage does not take <os>/<arch>/referrals-sandbox (GoReleaser's layout): %q", d.all("COPY"))
	}
	if add := d.final(t, "ADD"); add != "image/rootfs.tar /" {
		t.Errorf("ADD %q, want image/rootfs.tar / (the /tmp and /data a scratch image lacks)", add)
	}
	labels := d.final(t, "LABEL")
	for _, key := range []string{"source", "version", "licenses"} {
		if !strings.Contains(labels, "org.opencontainers.image."+key+"=") {
			t.Errorf("no OCI label org.opencontainers.image.%s: %s", key, labels)
		}
	}

	if user := d.final(t, "USER"); user == "root" || strings.HasPrefix(user, "0") || user == "" {
		t.Errorf("USER %q: the image must not run as root", user)
	}
	entrypoint := execForm(t, "ENTRYPOINT", d.final(t, "ENTRYPOINT"))
	if !slices.ContainsFunc(d.all("COPY"), func(c string) bool { return strings.HasSuffix(c, " "+entrypoint[0]) }) {
		t.Errorf("no COPY puts the binary at the ENTRYPOINT %s", entrypoint[0])
	}

	environ := d.imageEnv(t)
	c := checkServeEnvironment(t, "the image's ENV", environ)
	if expose := d.final(t, "EXPOSE"); expose != port(t, c.addr) && expose != port(t, c.addr)+"/tcp" {
		t.Errorf("EXPOSE %s, but serve listens on %s", expose, c.addr)
	}

	hc := d.final(t, "HEALTHCHECK")
	_, cmdJSON, ok := strings.Cut(hc, "CMD ")
	if !ok {
		t.Fatalf("HEALTHCHECK has no CMD: %q", hc)
	}
	hcArgs := execForm(t, "HEALTHCHECK CMD", cmdJSON)
	if hcArgs[0] != entrypoint[0] {
		t.Errorf("HEALTHCHECK runs %s, the image's binary is %s", hcArgs[0], entrypoint[0])
	}
	checkCommandLine(t, "HEALTHCHECK", hcArgs[1:])
	if environ["SANDBOX_HEALTH_FILE"] == "" || !strings.HasPrefix(environ["SANDBOX_HEALTH_FILE"], "/tmp/") {
		t.Errorf("SANDBOX_HEALTH_FILE %q, want a file under /tmp (the image's only writable directory besides /data)", environ["SANDBOX_HEALTH_FILE"])
	}
	// Under the image's environment, before serve wrote its health file,
	// the health check reaches the port serve listens on.
	if got := serveListenTarget(mapGetenv(environ)).url; got != "http://127.0.0.1:"+port(t, c.addr) {
		t.Errorf("under the image's ENV, healthcheck asks %q", got)
	}
}

// composeFile is the part of the compose specification the compose files
// (docker-compose.yml, examples/compose-redis) use; decoding with known
// fields only catches a misspelt key.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Build       string            `yaml:"build"`
	Image       string            `yaml:"image"`
	Command     []string          `yaml:"command"`
	Profiles    []string          `yaml:"profiles"`
	Ports       []string          `yaml:"ports"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck struct {
		Test        []string `yaml:"test"`
		Interval    string   `yaml:"interval"`
		Timeout     string   `yaml:"timeout"`
		StartPeriod string   `yaml:"start_period"`
		Retries     int      `yaml:"retries"`
	} `yaml:"healthcheck"`
}

func parseCompose(t *testing.T, data []byte) composeFile {
	t.Helper()
	return parseComposeFile(t, "docker-compose.yml", data)
}

// parseComposeFile decodes the compose file name with known fields only.
func parseComposeFile(t *testing.T, name string, data []byte) composeFile {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f composeFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

var composeVar = regexp.MustCompile(`\$\{[A-Z0-9_]+:-([^}]*)\}`)

// composeDefaults is s with every ${NAME:-default} replaced by its default,
// as compose reads it when NAME is unset.
func composeDefaults(s string) string { return composeVar.ReplaceAllString(s, "$1") }

// commentedVar is a commented-out example setting: `# SANDBOX_X: "value"`.
var commentedVar = regexp.MustCompile(`(?m)^\s*#\s*(SANDBOX_[A-Z0-9_]+):\s*"([^"]*)"\s*$`)

func TestDockerCompose(t *testing.T) {
	data := repoFile(t, "docker-compose.yml")
	checkVarsAreServeFlags(t, "docker-compose.yml", data)
	f := parseCompose(t, data)
	d := parseDockerfile(t, repoFile(t, "Dockerfile"))
	imageEnv := d.imageEnv(t)

	wantHostPorts := map[string]string{"sandbox": "8080", "sandbox-production": "8081"}
	for name, hostPort := range wantHostPorts {
		t.Run(name, func(t *testing.T) {
			svc, ok := f.Services[name]
			if !ok {
				t.Fatalf("no service %s", name)
			}
			if svc.Build != "." {
				t.Errorf("build %q, want .", svc.Build)
			}
			environ := map[string]string{}
			for k, v := range imageEnv {
				environ[k] = v
			}
			for k, v := range svc.Environment {
				environ[k] = v
			}
			c := checkServeEnvironment(t, name+"'s environment", environ)
			// Loopback unless the user opts in: the admin API is open by
			// default.
			if len(svc.Ports) != 1 || composeDefaults(svc.Ports[0]) != "127.0.0.1:"+hostPort+":"+port(t, c.addr) {
				t.Errorf("ports %q, want 127.0.0.1:%s:%s by default (serve listens on %s)", svc.Ports, hostPort, port(t, c.addr), c.addr)
			}
			if composeDefaults(svc.Image) != "referrals-sandbox:local" {
				t.Errorf("image %q, want referrals-sandbox:local by default", svc.Image)
			}
			checkComposeUsesImageHealthcheck(t, name, svc)
			if svc.Healthcheck.Interval == "" || svc.Healthcheck.Timeout == "" || svc.Healthcheck.Retries < 1 {
				t.Errorf("healthcheck timing incomplete: %+v", svc.Healthcheck)
			}
		})
	}

	prod := f.Services["sandbox-production"]
	if !slices.Contains(prod.Profiles, "production") {
		t.Errorf("sandbox-production profiles %q, want production", prod.Profiles)
	}
	if len(f.Services["sandbox"].Profiles) != 0 {
		t.Error("the sandbox service must start without a profile")
	}
	for _, v := range slices.Concat(prod.Volumes, f.Services["sandbox"].Volumes) {
		if strings.HasPrefix(v, "./") {
			if _, err := os.Stat(filepath.Join("..", "..", strings.SplitN(v, ":", 2)[0])); err != nil {
				t.Errorf("volume %s: %v", v, err)
			}
		}
	}
}

// checkComposeUsesImageHealthcheck: a service of the sandbox image gives
// the health check's timings but no test, so the image's exec-form
// HEALTHCHECK is used. podman-compose turns every healthcheck.test, exec
// form included, into `/bin/sh -c ...`, which never passes in an image
// without a shell; Docker Compose keeps the image's test when the file
// gives none.
func checkComposeUsesImageHealthcheck(t *testing.T, name string, svc composeService) {
	t.Helper()
	if test := svc.Healthcheck.Test; len(test) > 0 {
		t.Errorf("%s: healthcheck test %q: podman-compose would run it through /bin/sh, which the image lacks; give only the timings and let the image's HEALTHCHECK run", name, test)
	}
}

// TestComposeCommentedExamples checks that every commented-out SANDBOX_*
// example works once uncommented.
func TestComposeCommentedExamples(t *testing.T) {
	data := repoFile(t, "docker-compose.yml")
	matches := commentedVar.FindAllStringSubmatch(string(data), -1)
	if len(matches) == 0 {
		t.Fatal("no commented examples found; the pattern or the file changed")
	}
	library, err := scenarios.LoadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range matches {
		name, value := m[1], m[2]
		c := checkServeEnvironment(t, "example "+name, map[string]string{name: value})
		for _, sc := range c.opts.ScenarioNames {
			if _, ok, err := library.Get(context.Background(), sc); !ok || err != nil {
				t.Errorf("example %s names unknown scenario %q", name, sc)
			}
		}
	}
}

// TestComposeProductionService opens the sandbox the production service
// describes (its environment, its fixtures directory from the host) and
// checks that the production client gets a token and the development one
// does not exist.
func TestComposeProductionService(t *testing.T) {
	f := parseCompose(t, repoFile(t, "docker-compose.yml"))
	svc := f.Services["sandbox-production"]
	c := checkServeEnvironment(t, "sandbox-production", svc.Environment)
	if c.opts.Environment != referrals.EnvironmentProduction {
		t.Fatalf("environment %q, want production", c.opts.Environment)
	}
	hostDir := ""
	for _, v := range svc.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && parts[1] == c.opts.FixturesDir {
			hostDir = filepath.Join("..", "..", parts[0])
		}
	}
	if hostDir == "" {
		t.Fatalf("no volume mounts SANDBOX_FIXTURES=%s", c.opts.FixturesDir)
	}
	opts := c.opts
	opts.FixturesDir = hostDir
	url := startSandbox(t, opts)

	res := runCLI(t, nil, "token", "--url", url, "--client-id", "partner-prod", "--client-secret", "partner-prod-secret")
	if res.code != 0 {
		t.Errorf("partner-prod: exit %d, %s", res.code, res.stderr)
	}
	res = runCLI(t, nil, "token", "--url", url, "--client-id", "partner-dev", "--client-secret", "partner-dev-secret")
	if res.code != 1 || !strings.Contains(res.stderr, "AADSTS700016") {
		t.Errorf("partner-dev on production: exit %d, %s", res.code, res.stderr)
	}
	res = runCLI(t, nil, "token", "--url", url)
	if res.code != 1 {
		t.Errorf("the embedded development partner got a production token")
	}
	// The same directory on a development sandbox has only partner-dev.
	dev := startSandbox(t, sandbox.Config{FixturesDir: hostDir})
	if res := runCLI(t, nil, "token", "--url", dev, "--client-id", "partner-prod", "--client-secret", "partner-prod-secret"); res.code != 1 {
		t.Errorf("partner-prod got a token from a development sandbox")
	}
}
