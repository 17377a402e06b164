package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// standIn describes an image built FROM scratch out of this machine's own
// Debian programs, for a service whose registry image cannot be pulled
// here (no registry is reachable): the programs, the shared libraries ldd
// names for them, and a few files and directories they need.
type standIn struct {
	// programs are absolute paths copied into the image at the same path.
	programs []string
	// links are extra names (absolute path -> target path in the image).
	links map[string]string
	// files are written into the image (path -> content).
	files map[string]string
	// dirs are created empty (mode 1777 for /tmp, 0755 otherwise).
	dirs []string
	// workdir, entrypoint and cmd are the image's WORKDIR, ENTRYPOINT and
	// CMD (exec form; no ENTRYPOINT when empty).
	workdir    string
	entrypoint []string
	cmd        []string
}

// execFormList writes args as a Dockerfile exec-form list.
func execFormList(args []string) string {
	return `["` + strings.Join(args, `", "`) + `"]`
}

// lddLib matches one library line of ldd's output: "name => /path (addr)"
// or the loader's "/lib64/ld-linux-x86-64.so.2 (addr)".
var lddLib = regexp.MustCompile(`(?m)^\s*(?:\S+ => )?(/\S+) \(0x[0-9a-f]+\)$`)

// buildStandIn builds s as tag, or skips the test when one of its
// programs is not installed (unless REDIS_REQUIRED is set, as in CI,
// where .ci/run installs them).
func buildStandIn(t *testing.T, p *podman, tag string, s standIn) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	copied := map[string]bool{}
	var add func(path string)
	add = func(path string) {
		if copied[path] {
			return
		}
		copied[path] = true
		copyFile(t, path, filepath.Join(root, path), 0o755) // follows links: the image gets the file itself
		out, err := exec.Command("ldd", path).CombinedOutput()
		if err != nil {
			return // "not a dynamic executable": a static program needs nothing more
		}
		for _, m := range lddLib.FindAllStringSubmatch(string(out), -1) {
			add(m[1])
		}
	}
	for _, prog := range s.programs {
		if _, err := os.Stat(prog); err != nil {
			if os.Getenv("REDIS_REQUIRED") != "" {
				t.Fatalf("stand-in image %s: %v (.ci/run installs it)", tag, err)
			}
			t.Skipf("stand-in image %s: %v (.ci/run installs it)", tag, err)
		}
		add(prog)
	}
	for path, target := range s.links {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, path)); err != nil {
			t.Fatal(err)
		}
	}
	for path, content := range s.files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(content, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range s.dirs {
		mode := os.FileMode(0o755)
		if dir == "/tmp" {
			mode = 0o1777
		}
		if err := os.MkdirAll(filepath.Join(root, dir), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, dir), mode); err != nil {
			t.Fatal(err)
		}
	}
	dockerfile := "FROM scratch\nCOPY root/ /\nENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nWORKDIR " + s.workdir + "\n"
	if len(s.entrypoint) > 0 {
		dockerfile += "ENTRYPOINT " + execFormList(s.entrypoint) + "\n"
	}
	dockerfile += "CMD " + execFormList(s.cmd) + "\n"
	dir := filepath.Dir(root)
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	p.run(t, "build", "--pull=never", "--format", "docker", "-q", "-t", tag, dir)
}

// redisStandIn runs Debian's redis-server and redis-cli as the redis image
// does: data in /data, and an entry point that, like the image's, turns
// protected mode off for a redis-server started without a configuration
// file (other containers of the network are its clients).
func redisStandIn() standIn {
	return standIn{
		programs: []string{"/usr/bin/redis-server", "/usr/bin/redis-cli", "/bin/busybox"},
		links:    map[string]string{"/bin/sh": "/bin/busybox"},
		files: map[string]string{
			"/usr/local/bin/docker-entrypoint.sh": "#!/bin/sh\nif [ \"$1\" = redis-server ]; then set -- \"$@\" --protected-mode no; fi\nexec \"$@\"\n",
		},
		dirs:       []string{"/data", "/tmp"},
		workdir:    "/data",
		entrypoint: []string{"docker-entrypoint.sh"},
		cmd:        []string{"redis-server"},
	}
}

// nginxStandIn runs Debian's nginx in the foreground with the directories
// its compiled-in paths use, and busybox's wget for the front's health
// check, as the nginx image would.
func nginxStandIn() standIn {
	return standIn{
		programs: []string{"/usr/sbin/nginx", "/bin/busybox"},
		links:    map[string]string{"/usr/bin/wget": "/bin/busybox"},
		files: map[string]string{
			// Debian's nginx runs its workers as nobody:nogroup by default.
			"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
			"/etc/group":  "root:x:0:\nnogroup:x:65534:\n",
		},
		dirs:    []string{"/var/log/nginx", "/var/lib/nginx", "/var/lock", "/run", "/tmp", "/etc/nginx"},
		workdir: "/",
		cmd:     []string{"nginx", "-g", "daemon off;"},
	}
}
