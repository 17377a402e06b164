package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tlsca"
)

// DefaultURL is the sandbox the client subcommands talk to unless told
// otherwise: where serve listens by default.
const DefaultURL = "http://" + DefaultAddr

// defaultClientTimeout bounds token and admin requests: long enough for a
// scenario's delay on the token endpoint, short enough that a wrong --url
// fails fast.
const defaultClientTimeout = 10 * time.Second

// maxResponseBytes bounds what a client subcommand reads from the sandbox,
// so a wrong --url pointing at something else cannot flood memory.
const maxResponseBytes = 4 << 20

// errAnswerTooLarge is an admin answer longer than maxResponseBytes.
var errAnswerTooLarge = fmt.Errorf("the answer is larger than the %d bytes the CLI reads", maxResponseBytes)

// target is a running sandbox a client subcommand talks to: --url, --ca and
// --timeout.
type target struct {
	url     string
	ca      string
	timeout time.Duration
	// skipVerify accepts any certificate when no --ca is given. Only
	// healthcheck sets it, for a sandbox serving its own --tls-cert or a
	// local CA in a private directory, on the loopback address: it sends
	// nothing secret and only asks "are you up?".
	skipVerify bool
}

// addTargetFlags declares the flags every client subcommand shares, with
// the defaults in def.
func addTargetFlags(o *options, t *target, def target) {
	o.String(&t.url, "url", def.url, "root URL of the running sandbox (scheme, host and port)")
	o.String(&t.ca, "ca", def.ca, "PEM file of the CA that signed the sandbox's certificate (serve --tls logs its path as ca_cert and serves it at /__sandbox/ca.pem); empty: the system's CAs")
	o.Duration(&t.timeout, "timeout", def.timeout, "how long to wait for the sandbox's answer")
}

// check refuses a URL the subcommand could not use, naming the flag.
func (t *target) check() error {
	u, err := url.Parse(t.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: --url must be an http:// or https:// URL with a host, not %q", errUsage, t.url)
	}
	if t.timeout <= 0 {
		return fmt.Errorf("%w: --timeout must be positive", errUsage)
	}
	return nil
}

// endpoint joins the root URL and an absolute path.
func (t *target) endpoint(path string) string {
	return strings.TrimRight(t.url, "/") + path
}

// client returns an HTTP client that gives up after --timeout and, given
// --ca, trusts that CA alone: the sandbox's local CA signs nothing else.
func (t *target) client() (*http.Client, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if t.ca != "" {
		pemBytes, err := os.ReadFile(t.ca)
		if err != nil {
			return nil, fmt.Errorf("--ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return nil, fmt.Errorf("--ca: %s holds no PEM certificate", t.ca)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	} else if t.skipVerify {
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // see target.skipVerify
	} else if pool := withKeptCA(); pool != nil {
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: transport, Timeout: t.timeout}, nil
}

// defaultTarget is where every client subcommand looks for the sandbox
// unless told otherwise: where serve listens under the same environment
// (SANDBOX_ADDR, SANDBOX_TLS, SANDBOX_TLS_DIR), else serve's default
// address. healthcheck, token, scenario and report all find it this way.
func defaultTarget(getenv func(string) string) target {
	t := serveListenTarget(getenv).target
	if t.url == "" {
		t = target{url: DefaultURL}
	}
	t.skipVerify = false // only healthcheck may skip, and decides it itself
	t.timeout = defaultClientTimeout
	return t
}

// adminClient calls the sandbox's admin API under /__sandbox/.
type adminClient struct {
	target
	token string
	http  *http.Client
}

// addAdminFlags declares the flags of the subcommands that use the admin
// API. --admin-token shares SANDBOX_ADMIN_TOKEN with serve, so one
// environment configures both ends.
func addAdminFlags(o *options, a *adminClient) {
	addTargetFlags(o, &a.target, defaultTarget(o.getenv))
	o.String(&a.token, "admin-token", "", "bearer token of the admin API, when the sandbox was started with --admin-token")
}

// open checks the flags and prepares the HTTP client.
func (a *adminClient) open() error {
	if err := a.check(); err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	a.http = c
	return nil
}

// do sends one admin request with an optional JSON body and decodes a
// successful JSON answer into out (when out is not nil). An answer of 300
// or more becomes an error carrying the problem's detail. A state-changing
// call without a body sends {}: the admin API refuses bodiless ones.
func (a *adminClient) do(ctx context.Context, method, path string, body, out any) error {
	if body == nil && method != http.MethodGet && method != http.MethodHead {
		body = struct{}{}
	}
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.endpoint(path), reader)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, a.withCAHint(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if len(data) > maxResponseBytes {
		// Said as it is: a cut answer would fail to decode, and that
		// error would blame --url for an answer that was only large.
		return fmt.Errorf("%s %s: %w", method, path, errAnswerTooLarge)
	}
	if resp.StatusCode >= 300 {
		return adminError(method, path, resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: answer is not the admin API's JSON (is --url a sandbox?): %w", method, path, err)
	}
	return nil
}

// adminError describes a refused admin request with the problem's detail,
// and for 401 says which flag supplies the token.
func adminError(method, path string, status int, body []byte) error {
	var p struct {
		Detail string `json:"detail"`
	}
	detail := snippet(body)
	if json.Unmarshal(body, &p) == nil && p.Detail != "" {
		detail = p.Detail
	}
	msg := fmt.Sprintf("%s %s: the sandbox answered %d %s", method, path, status, http.StatusText(status))
	if detail != "" {
		msg += ": " + detail
	}
	if status == http.StatusUnauthorized {
		msg += " (give the admin token with --admin-token or SANDBOX_ADMIN_TOKEN)"
	}
	return fmt.Errorf("%s", msg)
}

// withKeptCA returns the system's CAs plus the local CA serve keeps for
// HTTPS on its default port (tlsca.DefaultDir), so that a subcommand
// reaches https://localhost:8080 on this machine without --ca, trusted or
// not; nil when there is no such CA (the system's CAs alone then).
func withKeptCA() *x509.CertPool {
	dir, err := tlsca.DefaultDir()
	if err != nil {
		return nil
	}
	pemBytes, err := os.ReadFile(filepath.Join(dir, tlsca.CAFile))
	if err != nil {
		return nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pemBytes) {
		return nil
	}
	return pool
}
