package main

import (
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// composeRedisDir is the shared-mode example: Redis, two replicas, nginx.
const composeRedisDir = "examples/compose-redis"

// fullyQualified matches an image reference with a registry host
// (docker.io/library/redis:7.2-alpine): podman and hosts without
// unqualified-search registries refuse short names.
var fullyQualified = regexp.MustCompile(`^[a-z0-9.-]+\.[a-z]+/[a-z0-9._/-]+:[A-Za-z0-9._-]+$`)

// TestComposeRedisExample checks examples/compose-redis as compose and the
// sandbox would read it: Redis with AOF fsync always, two replicas whose
// serve flags parse and agree (Redis, issuer, allowed hosts, signing key),
// and an nginx front that spreads over exactly those replicas.
func TestComposeRedisExample(t *testing.T) {
	data := repoFile(t, composeRedisDir+"/docker-compose.yml")
	checkVarsAreServeFlags(t, composeRedisDir, data)
	f := parseComposeFile(t, composeRedisDir+"/docker-compose.yml", data)
	d := parseDockerfile(t, repoFile(t, "Dockerfile"))

	for name, svc := range f.Services {
		if svc.Build == "" && !fullyQualified.MatchString(composeDefaults(svc.Image)) {
			t.Errorf("%s: image %q is pulled, so it must be fully qualified (registry/name:tag)", name, svc.Image)
		}
		if hc := svc.Healthcheck; (svc.Build == "" && (len(hc.Test) < 2 || hc.Test[0] != "CMD")) || hc.Interval == "" || hc.Timeout == "" || hc.Retries < 1 {
			t.Errorf("%s: healthcheck %+v, want exec form [CMD ...] (the sandbox's: the image's own) with interval, timeout and retries", name, hc)
		}
		for dep, cond := range svc.DependsOn {
			if _, ok := f.Services[dep]; !ok || cond.Condition != "service_healthy" {
				t.Errorf("%s depends on %s (%q), want an existing service and service_healthy", name, dep, cond.Condition)
			}
		}
		for _, p := range svc.Ports {
			if !strings.HasPrefix(composeDefaults(p), "127.0.0.1:") {
				t.Errorf("%s publishes %q: the admin API is open, publish on 127.0.0.1 only", name, p)
			}
		}
	}

	redisSvc, ok := f.Services["redis"]
	if !ok {
		t.Fatal("no redis service")
	}
	cmd := strings.Join(redisSvc.Command, " ")
	if !strings.Contains(cmd, "--appendonly yes") || !strings.Contains(cmd, "--appendfsync always") {
		t.Errorf("redis command %q, want --appendonly yes --appendfsync always (nothing acknowledged is lost)", cmd)
	}

	front, ok := f.Services["front"]
	if !ok || len(front.Ports) != 1 {
		t.Fatalf("front service %+v, want one published port", front)
	}
	published := strings.Split(composeDefaults(front.Ports[0]), ":") // 127.0.0.1:HOST:CONTAINER
	if len(published) != 3 {
		t.Fatalf("front port %q, want 127.0.0.1:HOST:CONTAINER", front.Ports[0])
	}

	imageEnv := d.imageEnv(t)
	var replicas []string
	var firstEnv map[string]string
	for _, name := range slices.Sorted(maps.Keys(f.Services)) {
		svc := f.Services[name]
		if svc.Build == "" {
			continue
		}
		replicas = append(replicas, name)
		if firstEnv == nil {
			firstEnv = svc.Environment
		} else if !maps.Equal(firstEnv, svc.Environment) {
			t.Errorf("%s's environment differs from %s's: replicas must share Redis, issuer and signing key", name, replicas[0])
		}
		environ := maps.Clone(imageEnv)
		for k, v := range svc.Environment {
			environ[k] = composeDefaults(v)
		}
		c := checkServeEnvironment(t, name+"'s environment", environ)
		if u, err := url.Parse(c.opts.Redis.URL); err != nil || u.Hostname() != "redis" {
			t.Errorf("%s: SANDBOX_REDIS %q, want the redis service", name, c.opts.Redis.URL)
		}
		if want := "http://127.0.0.1:" + published[1]; c.opts.PublicURL != want {
			t.Errorf("%s: SANDBOX_PUBLIC_URL %q, want the front address %s", name, c.opts.PublicURL, want)
		}
		if !slices.Contains(c.opts.AllowedHosts, "front") {
			t.Errorf("%s: SANDBOX_ALLOWED_HOSTS %q lacks front, the name other services use", name, c.opts.AllowedHosts)
		}
		if port(t, c.addr) != "8080" {
			t.Errorf("%s listens on %s; nginx.conf expects 8080", name, c.addr)
		}
		checkComposeUsesImageHealthcheck(t, name, svc)
		if _, ok := svc.DependsOn["redis"]; !ok {
			t.Errorf("%s does not wait for redis", name)
		}
	}
	if len(replicas) < 2 {
		t.Fatalf("replicas %q, want at least two sandbox services", replicas)
	}
	checkNginxConf(t, front, published[2], replicas)
}

// checkNginxConf checks the front's configuration file: mounted from the
// example's directory, listening on the published container port,
// spreading over exactly the replicas, passing the client's Host on.
func checkNginxConf(t *testing.T, front composeService, containerPort string, replicas []string) {
	t.Helper()
	var conf []byte
	for _, v := range front.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && parts[1] == "/etc/nginx/nginx.conf" {
			var err error
			if conf, err = os.ReadFile(filepath.Join("..", "..", composeRedisDir, parts[0])); err != nil {
				t.Fatalf("front's nginx.conf: %v", err)
			}
		}
	}
	if conf == nil {
		t.Fatal("front mounts no /etc/nginx/nginx.conf")
	}
	text := string(conf)
	if !regexp.MustCompile(`(?m)^\s*listen\s+` + containerPort + `;`).MatchString(text) {
		t.Errorf("nginx.conf does not listen on %s, the published container port", containerPort)
	}
	var servers []string
	for _, m := range regexp.MustCompile(`(?m)^\s*server\s+([a-z0-9-]+):8080;`).FindAllStringSubmatch(text, -1) {
		servers = append(servers, m[1])
	}
	slices.Sort(servers)
	if !slices.Equal(servers, replicas) {
		t.Errorf("nginx upstream servers %q, want the replicas %q", servers, replicas)
	}
	if !strings.Contains(text, "proxy_set_header Host $http_host;") {
		t.Error("nginx.conf must pass the client's Host on: the admin API checks it")
	}
}
