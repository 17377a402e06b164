package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// Browser test settings. The waits bound every DOM poll: generous, because
// a CI machine under -race is slow, yet a broken page fails rather than
// hangs.
const (
	domWait        = 15 * time.Second
	browserTimeout = 90 * time.Second
	desktopWidth   = 1280
	desktopHeight  = 800
	narrowWidth    = 420
	narrowHeight   = 900
	// docsScreenshots is where UPDATE_SCREENSHOTS=1 writes the images
	// of docs/qa-console.md, relative to this package's directory (go
	// test's working directory).
	docsScreenshots = "../../../docs/screenshots"
)

// chromiumPath finds Debian's chromium (or another Chrome) on PATH. Without
// one the browser tests skip locally and fail on CI (CI=true), where .ci/run
// installs it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const hint = "browser tests need Chromium: apt-get install -y chromium (Debian) or put chromium on PATH"
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found and CI=true: " + hint)
	}
	t.Skip("skipping browser test: chromium not found; " + hint)
	return ""
}

// newBrowser starts a headless Chromium with a fresh profile and one tab of
// the given viewport, closed when the test ends.
func newBrowser(t *testing.T, width, height int64) context.Context {
	t.Helper()
	execPath := chromiumPath(t)
	profile := t.TempDir() // registered first, so removed after the browser exits
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath),
		chromedp.UserDataDir(profile),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(int(width), int(height)),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	// The first Do starts the browser; it gets no deadline, since the
	// browser's life is bound to the context of that first call.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium (%s): %v", execPath, err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatalf("set viewport: %v", err)
	}
	watchConsole(t, ctx)
	return ctx
}

// watchConsole fails the test for every uncaught exception of the page and
// every error it or the browser logs, such as a Content-Security-Policy
// violation. Failed requests (source "network") are not errors here: the
// page asks the admin API for things that may answer 404 or 401.
func watchConsole(t *testing.T, ctx context.Context) {
	t.Helper()
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || (m.Type == chromedp.ConsoleError && m.Source != "network") {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line+1))
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			t.Errorf("browser console: %s", p)
		}
	})
}

// do runs browser steps with a bound, failing the test with what it was
// doing.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, browserTimeout)
	defer cancel()
	if err := chromedp.Do(tctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, browserTimeout)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript predicate in the page until it is true, for at
// most domWait; the page updates itself (polling the admin API), so the
// test waits for the DOM rather than sleeping.
func waitFor(t *testing.T, ctx context.Context, what, predicate string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, domWait+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(tctx, chromedp.Poll[chromedp.Void](predicate,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(domWait)))
	if err != nil {
		body := eval[string](t, ctx, `document.querySelector('main').innerText.slice(0, 1500)`)
		t.Fatalf("waiting %s for %s (%s): %v\npage text:\n%s", domWait, what, predicate, err, body)
	}
}

// openConsole loads the console at one of its views and waits until the
// page has loaded the clients (the first thing it asks the admin API).
func openConsole(t *testing.T, ctx context.Context, base, view string) {
	t.Helper()
	do(t, ctx, "open the console", chromedp.Navigate(base+"/__sandbox/ui/#"+view))
	waitFor(t, ctx, "the console to load its clients", `document.querySelectorAll('#report-client option').length > 1`)
}

// saveScreenshot captures the viewport as name (a .png file) into
// $ARTIFACTS_DIR, else a directory under the system temp directory, and with
// UPDATE_SCREENSHOTS=1 into docs/screenshots for docs/qa-console.md.
func saveScreenshot(t *testing.T, ctx context.Context, name string, forDocs bool) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, browserTimeout)
	defer cancel()
	png, err := chromedp.Run(tctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "referrals-sandbox-console-screenshots")
	}
	writePNG(t, dir, name, png)
	if forDocs && os.Getenv("UPDATE_SCREENSHOTS") == "1" {
		writePNG(t, docsScreenshots, name, png)
	}
}

func writePNG(t *testing.T, dir, name string, png []byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("screenshot directory: %v", err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("write screenshot: %v", err)
	}
	t.Logf("screenshot: %s", path)
}

// newSandbox runs the whole sandbox, as the binary does, on a test server.
func newSandbox(t *testing.T, opts ...func(*sandbox.Config)) (*sandbox.Instance, string) {
	t.Helper()
	var o sandbox.Config
	for _, set := range opts {
		set(&o)
	}
	in, err := sandbox.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in.Server)
	t.Cleanup(func() {
		srv.Close()
		_ = in.Close()
	})
	return in, srv.URL
}

// call is one HTTP request a test client makes to the sandbox.
type call struct {
	method, path, token, contentType, body string
	headers                                map[string]string
}

// send makes the call and returns the status and body.
func send(t *testing.T, base string, c call) (int, http.Header, []byte) {
	t.Helper()
	method := c.method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequest(method, base+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, c.path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, c.path, err)
	}
	return resp.StatusCode, resp.Header, data
}

// requestToken asks the token endpoint for a token with the given
// credentials, as a client_credentials client does.
func requestToken(t *testing.T, base, clientID, secret string) (int, http.Header, []byte) {
	t.Helper()
	form := url.Values{
		"grant_type": {"client_credentials"}, "client_id": {clientID},
		"client_secret": {secret}, "scope": {"api://referrals-sandbox/.default"},
	}
	return send(t, base, call{method: http.MethodPost, path: "/oauth2/v2.0/token",
		contentType: "application/x-www-form-urlencoded", body: form.Encode()})
}

// token gets an access token for one of the default clients (secret
// "<id>-secret").
func token(t *testing.T, base, clientID string) string {
	t.Helper()
	status, _, body := requestToken(t, base, clientID, clientID+"-secret")
	if status != http.StatusOK {
		t.Fatalf("token for %s: %d %s", clientID, status, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token response %s: %v", body, err)
	}
	return tok.AccessToken
}

// adminJSON calls the admin API and decodes its JSON answer into v.
func adminJSON(t *testing.T, base, path string, v any) {
	t.Helper()
	status, _, body := send(t, base, call{path: path})
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
