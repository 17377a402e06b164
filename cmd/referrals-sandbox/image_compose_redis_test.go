package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// checkComposeRedis runs examples/compose-redis for real with podman-compose:
// Redis, the two replicas from the image under test and the nginx front,
// with Redis and nginx from stand-in images of this machine's Debian
// programs, built by the example's standin-images script as the CI page
// tells a user without a registry to (no registry is reachable here). Through the one front address,
// which spreads requests over both replicas in turn, it checks what the
// example promises: a client created through one replica gets tokens from
// both and each replica, asked directly, lists it; a `times: 2` rule forces
// exactly two answers whichever replica serves; and a referral written
// through one is read through both.
//
// podman-compose 1.0.3 ignores depends_on conditions (and rewrites the
// exec-form health checks into `/bin/sh -c`, which these shell-less images
// cannot run), so the test brings each tier up and waits for it itself,
// as Docker Compose's service_healthy would.
//
// It adds about half a minute, so ./test runs it only with COMPOSE_STACK=1,
// which .ci/run sets.
func (img imageUnderTest) checkComposeRedis(t *testing.T) {
	if os.Getenv("COMPOSE_STACK") == "" {
		t.Skip("runs the compose-redis stack (about 30 s) only with COMPOSE_STACK=1, as .ci/run sets it")
	}
	compose, err := exec.LookPath("podman-compose")
	if err != nil {
		t.Skip("podman-compose is not installed (.ci/run installs it); the file is only parsed (TestComposeRedisExample)")
	}
	redisTag := "localhost/" + uniqueName(t, "referrals-redis-standin") + ":test"
	nginxTag := "localhost/" + uniqueName(t, "referrals-nginx-standin") + ":test"
	buildStandIns(t, img.p, redisTag, nginxTag)

	project := uniqueName(t, "referrals-redis-test")
	port := freePort(t)
	run := func(ctx context.Context, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, compose, append([]string{"-p", project, "-f", filepath.Join("..", "..", composeRedisDir, "docker-compose.yml")}, args...)...)
		cmd.Env = append(img.p.env, "REFERRALS_IMAGE="+img.tag, "REDIS_IMAGE="+redisTag, "NGINX_IMAGE="+nginxTag,
			"REFERRALS_PUBLISH_PORT="+strconv.Itoa(port))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if out, err := run(ctx, "down", "-t", "1"); err != nil {
			t.Logf("podman-compose down: %v\n%s", err, out)
		}
		img.p.cleanup(t, "network", "rm", "-f", project+"_default")
		img.p.cleanup(t, "volume", "rm", "-f", project+"_redis-data")
	})
	up := func(services ...string) {
		t.Helper()
		out, err := run(t.Context(), append([]string{"up", "-d", "--no-build"}, services...)...)
		if err != nil {
			t.Fatalf("podman-compose up %s: %v\n%s", strings.Join(services, " "), err, out)
		}
		t.Logf("podman-compose up %s:\n%s", strings.Join(services, " "), out)
	}
	container := func(service string) string {
		t.Helper()
		name := img.p.run(t, "ps", "-a", "--filter", "label=io.podman.compose.project="+project,
			"--filter", "label=com.docker.compose.service="+service, "--format", "{{.Names}}")
		if name == "" || strings.Contains(name, "\n") {
			t.Fatalf("want one %s container of project %s, got %q", service, project, name)
		}
		return name
	}
	waitExec := func(service string, args ...string) {
		t.Helper()
		name := container(service)
		deadline := time.Now().Add(30 * time.Second)
		for {
			out, code, stderr := img.p.try(t, append([]string{"exec", name}, args...)...)
			if code == 0 {
				return
			}
			if time.Now().After(deadline) {
				state, _, _ := img.p.try(t, "inspect", "--format", "{{.State.Status}} exit {{.State.ExitCode}} {{.State.Error}}", name)
				logs, _, logErr := img.p.try(t, "logs", name)
				t.Fatalf("%s: %s still fails after 30 s: exit %d %s %s\nstate: %s\nlogs:\n%s%s", service, strings.Join(args, " "), code, out, stderr, state, logs, logErr)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, service := range []string{"sandbox-a", "sandbox-b", "front", "redis"} {
			name, _, _ := img.p.tryContext(t, context.Background(), "ps", "-a", "--filter", "label=io.podman.compose.project="+project,
				"--filter", "label=com.docker.compose.service="+service, "--format", "{{.Names}}")
			if name == "" {
				continue
			}
			logs, _, stderr := img.p.tryContext(t, context.Background(), "logs", name)
			t.Logf("logs of %s:\n%s%s", service, logs, stderr)
		}
	})
	up("redis")
	waitExec("redis", "redis-cli", "ping")
	up("sandbox-a", "sandbox-b")
	// The replicas' health check is the image's (the compose file gives
	// only timings), which podman-compose keeps exec form.
	for _, service := range []string{"sandbox-a", "sandbox-b"} {
		waitContainerHealthy(t, img.p, container(service))
	}
	up("front")
	waitExec("front", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/__sandbox/health")
	root := waitServing(t, "http://127.0.0.1:"+strconv.Itoa(port))

	client := &http.Client{Timeout: 10 * time.Second}
	// send makes one request through the front. A replica answers 503
	// with Retry-After, and no Sandbox-Rule header, when it cannot reach
	// Redis for a moment; a partner's client retries then, and so does
	// send (logging it, with the answer), a few times.
	send := func(method, path, contentType string, body []byte, token string) (int, []byte) {
		t.Helper()
		for attempt := 1; ; attempt++ {
			req, err := http.NewRequestWithContext(t.Context(), method, root+path, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if contentType != "" {
				req.Header.Set("Content-Type", contentType)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s %s through the front: %v", method, path, err)
			}
			var buf bytes.Buffer
			_, err = buf.ReadFrom(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			unavailable := resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Sandbox-Rule") == "" && resp.Header.Get("Retry-After") != ""
			if !unavailable || attempt == 5 {
				return resp.StatusCode, buf.Bytes()
			}
			t.Logf("%s %s through the front: 503 without a rule (attempt %d), retrying after Retry-After: %s", method, path, attempt, buf.Bytes())
			time.Sleep(time.Second)
		}
	}
	call := func(method, path, token string, body any) (int, []byte) {
		t.Helper()
		if body == nil {
			return send(method, path, "", nil, token)
		}
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		return send(method, path, "application/json", raw, token)
	}
	tokenOf := func(clientID, secret string) string {
		t.Helper()
		form := tokenRequestForm(clientID, secret).Encode()
		status, body := send(http.MethodPost, "/oauth2/v2.0/token", "application/x-www-form-urlencoded", []byte(form), "")
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		if err := json.Unmarshal(body, &tok); status != http.StatusOK || err != nil || tok.AccessToken == "" {
			t.Fatalf("token for %s through the front: %d %v %s", clientID, status, err, body)
		}
		return tok.AccessToken
	}

	// A client created through one replica gets tokens through both: four
	// token requests alternate over the two.
	status, body := call(http.MethodPost, "/__sandbox/clients", "", map[string]any{})
	if status != http.StatusCreated {
		t.Fatalf("create a client through the front: %d %s", status, body)
	}
	var created struct{ ClientID, ClientSecret string }
	if err := json.Unmarshal(body, &created); err != nil {
		t.Fatal(err)
	}
	var token string
	for range 4 {
		token = tokenOf(created.ClientID, created.ClientSecret)
	}
	// Asked directly (from inside its container), each replica lists it.
	for _, replica := range []string{"sandbox-a", "sandbox-b"} {
		if out := img.p.run(t, "exec", container(replica), "/referrals-sandbox", "client", "list"); !strings.Contains(out, created.ClientID) {
			t.Errorf("%s's own client list lacks %s, created through the front:\n%s", replica, created.ClientID, out)
		}
	}

	// A times: 2 rule forces exactly two of six answers, whichever replica
	// serves them.
	if status, body := call(http.MethodPost, "/__sandbox/scenarios", "", map[string]any{"endpoint": "api", "status": 503, "times": 2}); status != http.StatusCreated {
		t.Fatalf("add a rule through the front: %d %s", status, body)
	}
	forced := 0
	for range 6 {
		switch status, body := call(http.MethodGet, "/api/v1/referrals/trials", token, nil); status {
		case http.StatusServiceUnavailable:
			forced++
		case http.StatusOK:
		default:
			t.Errorf("GET trials through the front: %d %s", status, body)
		}
	}
	if forced != 2 {
		t.Errorf("a times: 2 rule forced %d of 6 answers over two replicas, want 2", forced)
	}

	// A referral written through one replica is read through both.
	status, body = call(http.MethodGet, "/api/v1/referrals/trials", token, nil)
	var trials struct {
		Trials []struct {
			TrialID string `json:"trialId"`
		} `json:"trials"`
	}
	if err := json.Unmarshal(body, &trials); status != http.StatusOK || err != nil || len(trials.Trials) == 0 {
		t.Fatalf("trials through the front: %d %v %s", status, err, body)
	}
	status, body = call(http.MethodPost, "/api/v1/referrals/", token, map[string]any{
		"trialId": trials.Trials[0].TrialID,
		"patient": map[string]any{"firstName": "Ann", "lastName": "Lee", "dateOfBirth": "1980-04-12", "gender": "female"},
	})
	if status != http.StatusCreated {
		t.Fatalf("create a referral through the front: %d %s", status, body)
	}
	var ref struct {
		OutcomesID string `json:"outcomesId"`
	}
	if err := json.Unmarshal(body, &ref); err != nil || ref.OutcomesID == "" {
		t.Fatalf("created referral: %v %s", err, body)
	}
	for range 2 { // one read on each replica
		if status, body := call(http.MethodGet, "/api/v1/referrals/"+trials.Trials[0].TrialID+"/"+ref.OutcomesID, token, nil); status != http.StatusOK {
			t.Errorf("read the referral back through the front: %d %s", status, body)
		}
	}
}

// buildStandIns builds the Redis and nginx stand-in images with the
// example's standin-images script, or skips the test when a program it
// needs is not installed (unless REDIS_REQUIRED is set, as in CI, where
// .ci/run installs them).
func buildStandIns(t *testing.T, p *podman, redisTag, nginxTag string) {
	t.Helper()
	for _, prog := range []string{"/usr/bin/redis-server", "/usr/bin/redis-cli", "/usr/sbin/nginx", "/bin/busybox"} {
		if _, err := os.Stat(prog); err != nil {
			if os.Getenv("REDIS_REQUIRED") != "" {
				t.Fatalf("stand-in images: %v (.ci/run installs it)", err)
			}
			t.Skipf("stand-in images: %v (.ci/run installs it)", err)
		}
	}
	t.Cleanup(func() {
		p.cleanup(t, "rmi", "-f", redisTag)
		p.cleanup(t, "rmi", "-f", nginxTag)
	})
	cmd := exec.CommandContext(t.Context(), "bash", filepath.Join("..", "..", composeRedisDir, "standin-images"), redisTag, nginxTag)
	cmd.Env = append(p.env, "ENGINE="+p.path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("standin-images: %v\n%s", err, out)
	}
}
