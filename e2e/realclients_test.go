package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// programWait bounds one example program: they take a second or two.
const programWait = 90 * time.Second

// realClient is one example program of examples/clients/.
type realClient struct {
	name string
	// dir is the example's directory under examples/clients.
	dir string
	// command runs the program, given the interpreter found.
	command []string
	// available says why the program cannot run here ("" when it can).
	available func() string
}

// The steps every example prints as "PASS <step>", in order.
var realClientSteps = []string{"PASS token", "PASS trials and ping", "PASS wrong secret", "PASS 401 after clock advance", "PASS recovered"}

// TestRealClients runs each library's example program against the built
// binary with --tls, trusting the CA only through the variables a partner
// sets (NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE, SSL_CERT_FILE), on
// https://localhost while the ready line advertises 127.0.0.1. Each gets a
// token, calls trials and ping, shows that a wrong secret surfaces
// invalid_client / AADSTS7000215, and recovers from a 401 after a clock
// advance by forcing a refresh. A program whose library is not installed
// is skipped, unless REAL_CLIENTS=required (as .ci/run sets, having
// installed them all).
func TestRealClients(t *testing.T) {
	for _, c := range realClients() {
		t.Run(c.name, func(t *testing.T) {
			if why := c.available(); why != "" {
				if os.Getenv("REAL_CLIENTS") == "required" {
					t.Fatalf("REAL_CLIENTS=required but %s", why)
				}
				t.Skip(why)
			}
			sb := startTLSSandbox(t)
			ctx, cancel := context.WithTimeout(t.Context(), programWait)
			defer cancel()
			cmd := exec.CommandContext(ctx, c.command[0], c.command[1:]...)
			cmd.Dir = filepath.Join("..", "examples", "clients", c.dir)
			cmd.Env = append(os.Environ(),
				"SANDBOX_URL="+sb.base,
				"SANDBOX_TENANT=5f0a9c4e-3b1d-4e8a-9c27-0d1e2f3a4b5c",
				"SANDBOX_CLIENT_ID=sandbox-partner",
				"SANDBOX_CLIENT_SECRET=sandbox-partner-secret",
				"NODE_EXTRA_CA_CERTS="+sb.caFile,
				"REQUESTS_CA_BUNDLE="+sb.caFile,
				"SSL_CERT_FILE="+sb.caFile,
				"NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1",
			)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if err != nil {
				t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(c.command, " "), err, stdout.String(), stderr.String())
			}
			out := stdout.String()
			at := 0
			for _, step := range realClientSteps {
				i := strings.Index(out[at:], step)
				if i < 0 {
					t.Fatalf("%s did not print %q (in order)\nstdout:\n%s\nstderr:\n%s", c.name, step, out, stderr.String())
				}
				at += i + len(step)
			}
			t.Logf("%s:\n%s", c.name, out)
		})
	}
}

// realClients lists the example programs and how to tell whether each can
// run on this machine.
func realClients() []realClient {
	node := func(file string) realClient {
		return realClient{name: "node/" + strings.TrimSuffix(file, ".js"), dir: "node", command: []string{"node", file}, available: nodeAvailable}
	}
	python := pythonInterpreter()
	py := func(file, module, pkg string) realClient {
		return realClient{name: "python/" + strings.TrimSuffix(file, ".py"), dir: "python", command: []string{python, file},
			available: func() string { return pythonAvailable(python, module, pkg) }}
	}
	return []realClient{
		node("msal-node.js"),
		node("azure-identity.js"),
		node("openid-client.js"),
		node("jose.js"),
		py("msal_client.py", "msal", "python3-msal"),
		py("azure_identity_client.py", "azure.identity", "python3-azure"),
		py("authlib_client.py", "authlib", "python3-authlib"),
		py("requests_oauthlib_client.py", "requests_oauthlib", "python3-requests-oauthlib"),
		{name: "curl", dir: "curl", command: []string{"bash", "client.sh"}, available: func() string {
			if _, err := exec.LookPath("curl"); err != nil {
				return "curl is not installed"
			}
			return ""
		}},
	}
}

// nodeAvailable says why the Node examples cannot run, or "".
func nodeAvailable() string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not installed"
	}
	if _, err := os.Stat(filepath.Join("..", "examples", "clients", "node", "node_modules")); err != nil {
		return "the Node libraries are not installed: run npm ci in examples/clients/node (.ci/run does)"
	}
	return ""
}

// pythonInterpreter prefers Debian's python3, where apt installs the
// libraries, over another one earlier on PATH (pyenv, a virtualenv).
func pythonInterpreter() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// pythonAvailable says why a Python example cannot run, or "".
func pythonAvailable(python, module, pkg string) string {
	if _, err := exec.LookPath(python); err != nil {
		return "python3 is not installed"
	}
	if err := exec.Command(python, "-c", "import "+module+", requests").Run(); err != nil {
		return "Python module " + module + " is missing: apt-get install " + pkg + " python3-requests (.ci/run does)"
	}
	return ""
}
