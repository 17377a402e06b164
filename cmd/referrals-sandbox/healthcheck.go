package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tlsca"
)

// healthPath is the sandbox's unauthenticated health check.
const healthPath = "/__sandbox/health"

// healthcheckTimeout is short: a container runtime runs the check every few
// seconds and kills it at its own --timeout.
const healthcheckTimeout = 2 * time.Second

// listenTarget is where serve listens under an environment, as a client on
// the same host reaches it. problem says why it cannot be told, when url is
// empty.
type listenTarget struct {
	target
	problem string
}

// serveListenTarget reads the serve flags that decide where and how serve
// listens (SANDBOX_ADDR, SANDBOX_TLS, SANDBOX_TLS_DIR, SANDBOX_TLS_CERT)
// from the environment, with serve's own defaults and value parsing. Only
// those four are read, so that a bad value of an unrelated serve variable
// does not break the health check.
func serveListenTarget(getenv func(string) string) listenTarget {
	o := newOptions("serve", "", getenv, io.Discard)
	c := &serveConfig{}
	addServeFlags(o, c)
	for _, name := range []string{"addr", "tls", "tls-dir", "tls-cert"} {
		if v := getenv(envName(name)); v != "" {
			if err := o.fs.Set(name, v); err != nil {
				return listenTarget{problem: fmt.Sprintf("%s=%q is not valid: %v", envName(name), v, err)}
			}
		}
	}
	host, port, err := net.SplitHostPort(c.addr)
	switch {
	case err != nil:
		return listenTarget{problem: fmt.Sprintf("serve's address %q is not host:port: %v", c.addr, err)}
	case port == "0":
		return listenTarget{problem: fmt.Sprintf("serve's address %q picks a free port", c.addr)}
	}
	// A wildcard address accepts connections on every interface, loopback
	// included; the health check runs on the same host.
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	t := listenTarget{target: target{url: "http://" + net.JoinHostPort(host, port)}}
	if c.opts.TLS {
		t.url = "https://" + net.JoinHostPort(host, port)
		if c.opts.TLSCertFile == "" && c.opts.TLSDir != "" {
			t.ca = filepath.Join(c.opts.TLSDir, tlsca.CAFile)
		} else {
			// serve's own certificate, or its local CA in the private
			// directory only that serve process knows.
			t.skipVerify = true
		}
	}
	return t
}

// healthcheckConfig is healthcheck's flags and the serve address they
// default to.
type healthcheckConfig struct {
	target
	listen  listenTarget
	verbose bool
}

// healthTarget is where healthcheck looks by default: what serve recorded
// in SANDBOX_HEALTH_FILE when that file exists (serve's flags are not in
// healthcheck's environment), else what the SANDBOX_* variables say.
func healthTarget(getenv func(string) string) listenTarget {
	path := getenv(envName("health-file"))
	if path == "" {
		return serveListenTarget(getenv)
	}
	hf, found, err := readHealthFile(path)
	switch {
	case err != nil:
		return listenTarget{problem: err.Error()}
	case !found:
		return serveListenTarget(getenv)
	}
	return listenTarget{target: target{url: hf.URL, ca: hf.CA, skipVerify: hf.SkipVerify}}
}

func healthcheckFlags(e env) (*options, *healthcheckConfig) {
	h := &healthcheckConfig{listen: healthTarget(e.getenv)}
	o := newOptions("healthcheck",
		"Exit 0 when the sandbox's "+healthPath+" answers 200, 1 otherwise; print nothing on success. "+
			"The defaults reach serve as it recorded itself in SANDBOX_HEALTH_FILE (set in the image), "+
			"else under the same environment (SANDBOX_ADDR, SANDBOX_TLS, SANDBOX_TLS_DIR), "+
			"for a container HEALTHCHECK in an image without a shell.",
		e.getenv, e.stdout)
	def := h.listen.target
	def.timeout = healthcheckTimeout
	addTargetFlags(o, &h.target, def)
	o.Bool(&h.verbose, "v", false, "say why the sandbox is unhealthy (default: only the exit status, for wait loops)")
	return o, h
}

func runHealthcheck(ctx context.Context, e env, args []string) error {
	o, h := healthcheckFlags(e)
	if err := o.parse(args); err != nil {
		return err
	}
	err := h.probe(ctx)
	if err != nil && !errors.Is(err, errUsage) && !h.verbose {
		return errQuiet
	}
	return err
}

// probe asks the sandbox's health endpoint once.
func (h *healthcheckConfig) probe(ctx context.Context) error {
	if h.url == "" {
		return fmt.Errorf("%w: give --url: %s", errUsage, h.listen.problem)
	}
	if err := h.check(); err != nil {
		return err
	}
	// Skipping verification is only for the address derived from serve's
	// own --tls-cert, never for a URL or CA the caller chose.
	h.skipVerify = h.listen.skipVerify && h.url == h.listen.url && h.ca == ""
	client, err := h.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.endpoint(healthPath), nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("unhealthy: %w", h.withCAHint(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("unhealthy: %s answered %s", h.endpoint(healthPath), resp.Status)
	}
	return nil
}
