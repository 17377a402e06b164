package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// maxImageBytes bounds the image size (and, less a little, the binary's:
// TestBinaryIsSmall), so that an accidentally heavy dependency shows. It
// is not a budget to trim features for: peers' images are 100-300 MB and
// a platform team does not choose on size. 40 MiB leaves room for features
// that earn their size (an OTLP exporter) above the stripped binary, while
// a dependency that pulls in a cloud SDK or a second HTTP stack (tens of
// MB) still fails both tests.
const maxImageBytes = 40 << 20

// imageUnderTest is the Dockerfile built by podman, as TestImage's
// subtests share it.
type imageUnderTest struct {
	p   *podman
	tag string
}

// TestImage builds the real Dockerfile with podman from the test binary
// (--build-arg BINARY=context: nothing is pulled) and checks each way CI
// systems and people run it, against the running container from the host.
func TestImage(t *testing.T) {
	p := needPodman(t)
	bin := binary(t)
	img := imageUnderTest{p: p, tag: "localhost/" + uniqueName(t, "referrals-sandbox-test") + ":" + testVersion}
	// The build leaves intermediate images (one per stage and step);
	// remove the ones it added, and the image, whatever happens next.
	before := strings.Fields(p.run(t, "images", "-a", "-q", "--no-trunc"))
	t.Cleanup(func() {
		p.cleanup(t, "rmi", "-f", img.tag)
		after, _, _ := p.tryContext(t, context.Background(), "images", "-a", "-q", "--no-trunc")
		for _, id := range strings.Fields(after) {
			if !slices.Contains(before, id) {
				p.cleanup(t, "rmi", "-f", id)
			}
		}
	})
	start := time.Now()
	args := append([]string{"build"}, ciPageBuildFlags(t)...)
	p.run(t, append(args, "--build-arg", "VERSION="+testVersion, "-f", filepath.Join("..", "..", "Dockerfile"), "-t", img.tag, buildContext(t, bin))...)
	t.Logf("image built in %s", time.Since(start).Round(time.Millisecond))

	t.Run("metadata", img.checkMetadata)
	t.Run("podman build with a registry", img.checkDefaultBuild)
	t.Run("docker run lines of the CI page", img.checkCIPageDockerRun)
	t.Run("data on a named volume", img.checkDataVolume)
	t.Run("GitHub Actions service", img.checkGitHubActions)
	t.Run("GitLab CI service", img.checkGitLab)
	t.Run("docker compose", img.checkCompose)
	t.Run("compose with Redis", img.checkComposeRedis)
	t.Run("Testcontainers", img.checkTestcontainers)
}

// ciPageBuildFlags are the flags of the CI page's build without a registry
// (`podman build ... -t referrals-sandbox .`), which TestImage builds
// with; they must select the host-built binary and keep the HEALTHCHECK.
func ciPageBuildFlags(t *testing.T) []string {
	t.Helper()
	for _, line := range consoleLines(strings.Join(ciPageBlocks(t, "# In CI and containers", "console"), "")) {
		if len(line) > 4 && line[0] == "podman" && line[1] == "build" && slices.Contains(line, "--pull=never") {
			flags := slices.Clone(line[2:])
			if n := len(flags); n < 3 || !slices.Equal(flags[n-3:], []string{"-t", "referrals-sandbox", "."}) {
				t.Fatalf("the CI page's build ends %q, want -t referrals-sandbox .", flags)
			}
			flags = flags[:len(flags)-3]
			for _, want := range []string{"--format docker", "--build-arg BINARY=context"} {
				if !strings.Contains(strings.Join(flags, " "), want) {
					t.Errorf("the CI page's build lacks %s: %q", want, flags)
				}
			}
			return flags
		}
	}
	t.Fatal("the CI page shows no podman build --pull=never line")
	return nil
}

// imageInspect is the part of `podman image inspect` the test reads.
type imageInspect struct {
	Size   int64
	Config struct {
		User         string
		Env          []string
		Entrypoint   []string
		ExposedPorts map[string]any
		Labels       map[string]string
	}
	Healthcheck struct{ Test []string }
}

// inspect returns what podman knows of the image.
func (img imageUnderTest) inspect(t *testing.T) imageInspect {
	t.Helper()
	var got []imageInspect
	if err := json.Unmarshal([]byte(img.p.run(t, "image", "inspect", img.tag)), &got); err != nil || len(got) != 1 {
		t.Fatalf("image inspect: %v", err)
	}
	return got[0]
}

func (img imageUnderTest) checkMetadata(t *testing.T) {
	in := img.inspect(t)
	t.Logf("image size %.1f MB", float64(in.Size)/(1<<20))
	if in.Size > maxImageBytes {
		t.Errorf("image is %d bytes, more than %d", in.Size, maxImageBytes)
	}
	if in.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", in.Config.User)
	}
	// Exec form: without --format docker, podman drops the HEALTHCHECK.
	if want := []string{"CMD", "/referrals-sandbox", "healthcheck"}; strings.Join(in.Healthcheck.Test, " ") != strings.Join(want, " ") {
		t.Errorf("healthcheck %q, want %q", in.Healthcheck.Test, want)
	}
	if _, ok := in.Config.ExposedPorts["8080/tcp"]; !ok {
		t.Errorf("exposed ports %v: GitLab waits for the exposed port", in.Config.ExposedPorts)
	}
	for key, want := range map[string]string{
		"org.opencontainers.image.version":  testVersion,
		"org.opencontainers.image.source":   "https://github.com/referrals-sandbox/referrals-sandbox",
		"org.opencontainers.image.licenses": "Apache-2.0",
	} {
		if got := in.Config.Labels[key]; got != want {
			t.Errorf("label %s = %q, want %q", key, got, want)
		}
	}
	// The binary in the image is the one built; `version` runs it without
	// a shell.
	out := img.p.run(t, "run", "--rm", img.tag, "version")
	if !strings.HasPrefix(out, "referrals-sandbox "+testVersion+" (commit "+testCommit) {
		t.Errorf("version in the image: %q", out)
	}
}

// checkCIPageDockerRun runs each `docker run` line of the CI page's
// "docker run" section with podman, on a free port instead of 8080, and
// the image under test for referrals-sandbox: healthy through the image's
// HEALTHCHECK, a token and an API call from the host (over verified HTTPS
// when the line turns TLS on), and a prompt exit 0 on SIGTERM.
func (img imageUnderTest) checkCIPageDockerRun(t *testing.T) {
	lines := consoleLines(ciPageBlock(t, "## docker run", "console"))
	if len(lines) < 3 {
		t.Fatalf("the CI page's docker run section has %d commands", len(lines))
	}
	for _, line := range lines {
		t.Run(strings.Join(line, " "), func(t *testing.T) {
			runArgs, cmdArgs := img.ciPageRunArgs(t, line)
			c := img.p.startContainer(t, img.tag, runArgs, cmdArgs)
			t.Logf("start to healthy: %s", c.waitHealthy(t).Round(time.Millisecond))
			if slices.Contains(line, "--tls") || slices.Contains(line, "SANDBOX_TLS=true") {
				checkTLS(t, c)
			} else {
				callAPI(t, c.hostURL, http.DefaultClient)
			}
			took, exit := c.stop(t)
			t.Logf("stopped %s after SIGTERM", took.Round(time.Millisecond))
			if exit != "0" {
				t.Errorf("exit status %s after SIGTERM, want 0 (137 would mean podman had to SIGKILL it)", exit)
			}
			// The server itself stops in milliseconds; the bound leaves
			// room for a loaded machine and podman's own bookkeeping.
			if took > 5*time.Second {
				t.Errorf("podman stop took %s; the sandbox must exit promptly on SIGTERM", took)
			}
		})
	}
}

// consoleLines splits a console block into commands: one a line, comments
// dropped.
func consoleLines(block string) [][]string {
	var lines [][]string
	for _, line := range strings.Split(block, "\n") {
		line, _, _ = strings.Cut(line, "#")
		if fields := strings.Fields(line); len(fields) > 0 {
			lines = append(lines, fields)
		}
	}
	return lines
}

// ciPageRunArgs turns a CI page `docker run ... referrals-sandbox ...` line
// into podman's arguments before and after the image: --rm and the
// published port are startContainer's, and a named volume gets a fresh
// name removed after the test.
func (img imageUnderTest) ciPageRunArgs(t *testing.T, line []string) (runArgs, cmdArgs []string) {
	t.Helper()
	if len(line) < 3 || line[0] != "docker" || line[1] != "run" {
		t.Fatalf("not a docker run line: %q", line)
	}
	i := slices.Index(line, "referrals-sandbox")
	if i < 0 {
		t.Fatalf("no referrals-sandbox image in %q", line)
	}
	before := line[2:i]
	for j := 0; j < len(before); j++ {
		switch arg := before[j]; {
		case arg == "--rm":
		case arg == "-p" && j+1 < len(before):
			if before[j+1] != "127.0.0.1:8080:8080" {
				t.Errorf("the CI page publishes %s, want 127.0.0.1:8080:8080", before[j+1])
			}
			j++
		case arg == "-v" && j+1 < len(before):
			name, target, _ := strings.Cut(before[j+1], ":")
			vol := uniqueName(t, "referrals-sandbox-test-"+name)
			img.p.run(t, "volume", "create", vol)
			t.Cleanup(func() { img.p.cleanup(t, "volume", "rm", "-f", vol) })
			runArgs = append(runArgs, "-v", vol+":"+target)
			j++
		default:
			runArgs = append(runArgs, arg)
		}
	}
	return runArgs, line[i+1:]
}

// checkTLS fetches ca.pem without verification (the way a CI job
// bootstraps trust), then verifies the server with it.
func checkTLS(t *testing.T, c *container) {
	t.Helper()
	root := strings.Replace(c.hostURL, "http://", "https://", 1)
	insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // fetching the CA to trust
	caPEM := get(t, insecure, root+"/__sandbox/ca.pem", "")
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(caPEM)) {
		t.Fatalf("/__sandbox/ca.pem is not a PEM certificate: %q", caPEM)
	}
	verified := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	callAPI(t, root, verified)
}

// checkDataVolume: --data on a named volume keeps a referral across a
// container restart (the runtime user owns /data, so a fresh volume is
// writable).
func (img imageUnderTest) checkDataVolume(t *testing.T) {
	vol := uniqueName(t, "referrals-sandbox-test-data")
	img.p.run(t, "volume", "create", vol)
	c := img.p.startContainer(t, img.tag, []string{"-v", vol + ":/data"}, []string{"--data", "/data/x.db"})
	// Cleanups run last-registered first: the container goes before its
	// volume can.
	t.Cleanup(func() {
		img.p.cleanup(t, "rm", "-f", "-t", "0", c.name)
		img.p.cleanup(t, "volume", "rm", "-f", vol)
	})
	c.waitHealthy(t)
	token := hostToken(t, c.hostURL, http.DefaultClient)
	ref := uniqueName(t, "partner-ref")
	body := `{"externalSourceId": "` + ref + `", "trialId": "NCT05550001",
		"patient": {"firstName": "Ann", "lastName": "Lee", "dateOfBirth": "1980-04-12", "gender": "female"},
		"conditions": [{"code": "C50.911", "system": "ICD-10-CM", "display": "Breast cancer"}]}`
	req, err := http.NewRequest(http.MethodPost, c.hostURL+"/api/v1/referrals/qualified", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	created, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		t.Fatalf("submit: %d %s", resp.StatusCode, created)
	}

	img.p.run(t, "restart", "-t", "10", c.name)
	c.started = time.Now()
	c.waitHealthy(t)
	token = hostToken(t, c.hostURL, http.DefaultClient)
	got := get(t, http.DefaultClient, c.hostURL+"/api/v1/referrals/qualified/"+ref, token)
	if !strings.Contains(got, `"externalSourceId":"`+ref+`"`) {
		t.Errorf("after the restart the referral is gone or different: %s", got)
	}
}

// hostToken gets a token for the default partner from the host, as a
// partner's client would.
func hostToken(t *testing.T, root string, client *http.Client) string {
	t.Helper()
	return tokenFrom(t, client, root, "sandbox-partner", "sandbox-partner-secret")
}

// tokenFrom gets a client-credentials token from the authority URL (the
// root, or the root and tenant) with the form a partner's client posts.
func tokenFrom(t *testing.T, client *http.Client, authURL, clientID, secret string) string {
	t.Helper()
	resp, err := client.PostForm(authURL+"/oauth2/v2.0/token", tokenRequestForm(clientID, secret))
	if err != nil {
		t.Fatalf("token from %s: %v", authURL, err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		t.Fatalf("token from %s: %d %v", authURL, resp.StatusCode, err)
	}
	return tok.AccessToken
}

// tokenRequestForm is the client-credentials form a partner's client posts.
func tokenRequestForm(clientID, secret string) url.Values {
	return url.Values{
		"grant_type": {"client_credentials"}, "client_id": {clientID},
		"client_secret": {secret}, "scope": {"api://referrals-sandbox/.default"},
	}
}

// callAPI gets a token and lists the trials with it.
func callAPI(t *testing.T, root string, client *http.Client) {
	t.Helper()
	token := hostToken(t, root, client)
	if body := get(t, client, root+"/api/v1/referrals/trials", token); !strings.Contains(body, `"trialId"`) {
		t.Errorf("trials: %s", body)
	}
}

// get returns the body of a 200 answer to GET url, with a bearer token
// when one is given.
func get(t *testing.T, client *http.Client, url, token string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v %s", url, resp.StatusCode, err, body)
	}
	return string(body)
}

// freePort is a loopback port for a published container port.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := strconv.Atoi(closedPort(t))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
