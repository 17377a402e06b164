package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// confLines are the settings of a containers.conf: its lines without
// comments and blank lines.
func confLines(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		line, _, _ = strings.Cut(line, "#")
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// TestCIPagePodmanSection: the CI page tells a Podman user what CI had to
// learn: CONTAINERS_CONF with the settings of .ci/containers.conf (which
// the image tests use), podman-compose's limits and how to wait without
// --wait, and how to build the stand-in Redis and nginx images with the
// script the tests run; the compose section links the stack with Redis.
func TestCIPagePodmanSection(t *testing.T) {
	blocks := ciPageBlocks(t, "## Podman and offline", "toml")
	if want := confLines(string(repoFile(t, ".ci/containers.conf"))); !slices.Equal(confLines(blocks[0]), want) {
		t.Errorf("the page's containers.conf %q is not .ci/containers.conf's %q", confLines(blocks[0]), want)
	}
	page := strings.Join(strings.Fields(string(repoFile(t, ciPage))), " ")
	for _, want := range []string{"CONTAINERS_CONF", "error setting rlimit type 7", "podman healthcheck run", "no `--wait`", "examples/compose-redis/standin-images", "REDIS_IMAGE", "NGINX_IMAGE"} {
		if !strings.Contains(page, want) {
			t.Errorf("%s does not mention %s", ciPage, want)
		}
	}
	info, err := os.Stat(filepath.Join("..", "..", composeRedisDir, "standin-images"))
	if err != nil || info.Mode()&0o111 == 0 {
		t.Errorf("%s/standin-images is missing or not executable: %v", composeRedisDir, err)
	}
	var wait string
	for _, block := range ciPageBlocks(t, "## Podman and offline", "console") {
		if strings.Contains(block, "podman-compose up -d sandbox\n") {
			wait = block
		}
	}
	if lines := consoleLines(wait); len(lines) == 0 || !slices.Equal(lines[len(lines)-1], []string{"podman", "healthcheck", "run", `"$name"`}) {
		t.Errorf("the podman-compose wait does not end with a health check that fails the script: %q", wait)
	}
	compose := strings.Join(fencedBlocks(t, ciPage, "console", "## docker compose"), "\n")
	if !strings.Contains(compose, "cd examples/compose-redis") || !strings.Contains(page, "](../examples/compose-redis/docker-compose.yml)") {
		t.Errorf("the compose section does not show the compose-with-Redis stack")
	}
}
