package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	yaml "github.com/oasdiff/yaml3"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
)

// ciPage is the docs page whose examples TestImage runs against the image.
const ciPage = "docs/ci-and-containers.md"

// ciPageBlock returns the first fenced block of lang after heading in the
// CI page: the example a reader of that section copies.
func ciPageBlock(t *testing.T, heading, lang string) string {
	t.Helper()
	return ciPageBlocks(t, heading, lang)[0]
}

// ciPageBlocks returns the fenced blocks of lang in the CI page's section
// under heading.
func ciPageBlocks(t *testing.T, heading, lang string) []string {
	t.Helper()
	blocks := fencedBlocks(t, ciPage, lang, heading)
	if len(blocks) == 0 {
		t.Fatalf("%s has no %s block under %q", ciPage, lang, heading)
	}
	return blocks
}

// githubActionsJob is the CI page's GitHub Actions job, as the runner reads
// it.
type githubActionsJob struct {
	Jobs map[string]struct {
		Services map[string]struct {
			Image   string   `yaml:"image"`
			Ports   []string `yaml:"ports"`
			Options string   `yaml:"options"`
		} `yaml:"services"`
		Env map[string]string `yaml:"env"`
	} `yaml:"jobs"`
}

// checkGitHubActions runs the CI page's service container the way the
// Actions runner does: `docker create` with the job's options, then it
// waits for the image's HEALTHCHECK status. No option may be --health-cmd,
// which Docker turns into CMD-SHELL (/bin/sh -c) and which can never pass
// in an image without a shell; that failure is shown first.
func (img imageUnderTest) checkGitHubActions(t *testing.T) {
	job := ciPageGitHubActions(t).Jobs["integration"]
	svc := job.Services["sandbox"]
	options := strings.Fields(svc.Options)
	if slices.ContainsFunc(options, func(o string) bool { return strings.HasPrefix(o, "--health-cmd") }) {
		t.Fatalf("the example passes --health-cmd, which runs through /bin/sh: %q", svc.Options)
	}
	if len(svc.Ports) != 1 || svc.Ports[0] != "8080:8080" {
		t.Errorf("ports %q, want 8080:8080 (the env below uses localhost:8080)", svc.Ports)
	}

	// What the old example did: a shell-form command never passes.
	shell := img.p.startContainer(t, img.tag, []string{"--health-cmd", "/referrals-sandbox healthcheck"}, nil)
	callAPI(t, waitServing(t, shell.hostURL), http.DefaultClient)
	if _, code, _ := img.p.try(t, "healthcheck", "run", shell.name); code == 0 {
		t.Errorf("--health-cmd passed in an image without a shell; the CI page's warning is wrong")
	}

	// Docker keeps the image's exec-form test when the options give only
	// timings (its daemon merges the two); podman ignores timings without
	// a command. So the test passes Docker's merged result: the image's
	// own test, in exec form (a JSON array), with the example's options.
	test := img.inspect(t).Healthcheck.Test
	if len(test) < 2 || test[0] != "CMD" {
		t.Fatalf("the image's health check %q is not exec form", test)
	}
	execJSON, _ := json.Marshal(test[1:])
	c := img.p.startContainer(t, img.tag, append([]string{"--health-cmd", string(execJSON)}, options...), nil)
	var got struct {
		Test    []string
		Retries int
	}
	if err := json.Unmarshal([]byte(img.p.run(t, "inspect", "--format", "{{json .Config.Healthcheck}}", c.name)), &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Test, test) || !slices.Contains(options, "--health-retries") || strconv.Itoa(got.Retries) != options[slices.Index(options, "--health-retries")+1] {
		t.Errorf("container health check %+v: not the image's exec-form test with the example's options %q", got, options)
	}
	c.waitHealthy(t)
	// The job's environment, with the runner's localhost:8080 as the port
	// published here.
	local := func(u string) string { return strings.Replace(u, "http://localhost:8080", c.hostURL, 1) }
	token := tokenFrom(t, http.DefaultClient, local(job.Env["REFERRALS_AUTH_URL"]), job.Env["REFERRALS_CLIENT_ID"], job.Env["REFERRALS_CLIENT_SECRET"])
	if body := get(t, http.DefaultClient, local(job.Env["REFERRALS_BASE_URL"])+"/referrals/trials", token); !strings.Contains(body, `"trialId"`) {
		t.Errorf("trials: %s", body)
	}
}

// gitlabJob is the CI page's GitLab CI file: its jobs by name.
type gitlabJob map[string]gitlabJobSpec

// gitlabJobSpec is one GitLab CI job.
type gitlabJobSpec struct {
	Image    string `yaml:"image"`
	Services []struct {
		Name  string `yaml:"name"`
		Alias string `yaml:"alias"`
	} `yaml:"services"`
	Variables map[string]string `yaml:"variables"`
}

// checkGitLab runs the CI page's service the way GitLab does: the job's
// variables passed to the service, readiness meaning the exposed port
// accepts connections (no health check), then the job's first request.
func (img imageUnderTest) checkGitLab(t *testing.T) {
	job := ciPageGitLab(t)
	public := job.Variables["SANDBOX_PUBLIC_URL"]
	if public != "http://"+job.Services[0].Alias+":8080" {
		t.Errorf("SANDBOX_PUBLIC_URL %q does not name the alias and port", public)
	}
	var envArgs []string
	for k, v := range job.Variables {
		envArgs = append(envArgs, "-e", k+"="+v)
	}
	c := img.p.startContainer(t, img.tag, envArgs, nil)
	waitPort(t, c.hostURL)
	// Tokens carry the alias URL as their issuer, whatever address the
	// request came in on.
	token := tokenFrom(t, http.DefaultClient, waitServing(t, c.hostURL), job.Variables["REFERRALS_CLIENT_ID"], job.Variables["REFERRALS_CLIENT_SECRET"])
	iss, _ := testutil.JWTClaims(t, token)["iss"].(string)
	if !strings.HasPrefix(iss, public+"/") {
		t.Errorf("iss %q, want it under %s", iss, public)
	}
	if !strings.HasPrefix(job.Variables["REFERRALS_AUTH_URL"], public+"/") || job.Variables["REFERRALS_BASE_URL"] != public+"/api/v1" {
		t.Errorf("the job's REFERRALS_* URLs do not match SANDBOX_PUBLIC_URL: %v", job.Variables)
	}
}

// waitServing returns root once GET /__sandbox/health answers 200 from the
// host: a published port may accept connections (the runtime's port
// forwarder) a moment before the process behind it listens.
func waitServing(t *testing.T, root string) string {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get(root + healthPath)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return root
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not serving after 30s: %v", root, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkCompose brings the compose file's sandbox service up from the image
// under test with podman-compose, waits for the container's own health
// check to pass, calls it and tears it down.
//
// podman-compose 1.0.3 (Debian 12) rewrites any healthcheck.test, exec
// form included, into `/bin/sh -c ...`, which never passes in an image
// without a shell, and has no --wait. The compose file gives no test, only
// timings, so the container keeps the image's exec-form HEALTHCHECK: the
// check that must pass here is the container's, run as the CI page's
// podman-compose wait runs it (`podman healthcheck run`). Docker Compose
// itself cannot be installed on these machines.
func (img imageUnderTest) checkCompose(t *testing.T) {
	compose, err := exec.LookPath("podman-compose")
	if err != nil {
		t.Skip("podman-compose is not installed (.ci/run installs it); the compose file is only parsed (TestDockerCompose)")
	}
	project := uniqueName(t, "referrals-sandbox-test")
	port := freePort(t)
	run := func(ctx context.Context, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, compose, append([]string{"-p", project, "-f", filepath.Join("..", "..", "docker-compose.yml")}, args...)...)
		cmd.Env = append(img.p.env, "REFERRALS_IMAGE="+img.tag, "REFERRALS_PUBLISH_PORT="+strconv.Itoa(port))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := run(ctx, "down", "-t", "1"); err != nil {
			t.Logf("podman-compose down: %v\n%s", err, out)
		}
		// podman-compose 1.0.3's down leaves the project's network.
		img.p.cleanup(t, "network", "rm", "-f", project+"_default")
	})
	if out, err := run(t.Context(), "up", "-d", "--no-build", "sandbox"); err != nil {
		t.Fatalf("podman-compose up: %v\n%s", err, out)
	}
	name := img.p.run(t, "ps", "--filter", "label=io.podman.compose.project="+project, "--format", "{{.Names}}")
	if name == "" || strings.Contains(name, "\n") {
		t.Fatalf("want the one sandbox container of project %s, got %q", project, name)
	}
	root := "http://127.0.0.1:" + strconv.Itoa(port)
	waitServing(t, root)
	if test := img.p.run(t, "inspect", "--format", "{{json .Config.Healthcheck.Test}}", name); test != `["CMD","/referrals-sandbox","healthcheck"]` {
		t.Errorf("the compose container's health check is %s, want the image's exec form", test)
	}
	(&container{p: img.p, name: name, hostURL: root, started: time.Now()}).waitHealthy(t)
	callAPI(t, root, http.DefaultClient)
}

// ciPageGitHubActions is the CI page's GitHub Actions example, which must
// have an integration job with a sandbox service.
func ciPageGitHubActions(t *testing.T) githubActionsJob {
	t.Helper()
	var wf githubActionsJob
	if err := yaml.Unmarshal([]byte(ciPageBlock(t, "## GitHub Actions", "yaml")), &wf); err != nil {
		t.Fatalf("the CI page's GitHub Actions example: %v", err)
	}
	job, ok := wf.Jobs["integration"]
	if _, ok2 := job.Services["sandbox"]; !ok || !ok2 {
		t.Fatalf("the CI page's GitHub Actions example has no integration job with a sandbox service: %+v", wf)
	}
	return wf
}

// ciPageGitLab is the integration job of the CI page's GitLab CI example,
// which must have one service, aliased sandbox.
func ciPageGitLab(t *testing.T) gitlabJobSpec {
	t.Helper()
	var jobs gitlabJob
	if err := yaml.Unmarshal([]byte(ciPageBlock(t, "## GitLab CI", "yaml")), &jobs); err != nil {
		t.Fatalf("the CI page's GitLab example: %v", err)
	}
	job := jobs["integration"]
	if len(job.Services) != 1 || job.Services[0].Alias != "sandbox" {
		t.Fatalf("services %+v, want one aliased sandbox", job.Services)
	}
	return job
}

// TestCIPageExamples finds, without a container engine, each example of
// docs/ci-and-containers.md that TestImage runs against the image, so an
// edit of the page that hides one from TestImage fails wherever the tests
// run, not only where podman is.
func TestCIPageExamples(t *testing.T) {
	ciPageBuildFlags(t)
	if lines := consoleLines(ciPageBlock(t, "## docker run", "console")); len(lines) < 3 {
		t.Errorf("the CI page's docker run section has %d commands, want at least 3", len(lines))
	}
	ciPageGitHubActions(t)
	ciPageGitLab(t)
}
