package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/internal/console"
)

func TestHandlerServesAssetsWithTheirTypes(t *testing.T) {
	srv := httptest.NewServer(console.Handler())
	defer srv.Close()
	tests := []struct {
		path     string
		status   int
		wantType string
		wantBody string
	}{
		{"/", http.StatusOK, "text/html; charset=utf-8", `<script src="app.js" defer></script>`},
		{"/index.html", http.StatusOK, "text/html; charset=utf-8", "<title>QA console"},
		{"/app.js", http.StatusOK, "text/javascript; charset=utf-8", "'use strict';"},
		{"/style.css", http.StatusOK, "text/css; charset=utf-8", ":root {"},
		{"/missing.js", http.StatusNotFound, "", ""},
		{"/console.go", http.StatusNotFound, "", ""},
		{"/assets/app.js", http.StatusNotFound, "", ""},
		{"/../console.go", http.StatusNotFound, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d; body %.200s", resp.StatusCode, tc.status, body)
			}
			if tc.status != http.StatusOK {
				return
			}
			if got := resp.Header.Get("Content-Type"); got != tc.wantType {
				t.Errorf("Content-Type %q, want %q", got, tc.wantType)
			}
			if !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("body does not contain %q", tc.wantBody)
			}
			for header, want := range map[string]string{
				"X-Content-Type-Options": "nosniff",
				"Cache-Control":          "no-cache",
			} {
				if got := resp.Header.Get(header); got != want {
					t.Errorf("%s %q, want %q", header, got, want)
				}
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("Content-Security-Policy %q does not limit scripts to the sandbox", csp)
			}
		})
	}
}

func TestHandlerRevalidatesByETag(t *testing.T) {
	srv := httptest.NewServer(console.Handler())
	defer srv.Close()
	first, err := http.Get(srv.URL + "/app.js")
	if err != nil {
		t.Fatal(err)
	}
	first.Body.Close()
	etag := first.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/app.js", nil)
	req.Header.Set("If-None-Match", etag)
	again, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusNotModified {
		t.Errorf("status %d with If-None-Match, want 304", again.StatusCode)
	}
}

func TestHandlerRefusesOtherMethods(t *testing.T) {
	srv := httptest.NewServer(console.Handler())
	defer srv.Close()
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		req, _ := http.NewRequest(method, srv.URL+"/", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: status %d Allow %q, want 405 with GET, HEAD", method, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
}

// TestAssetsNeedNoNetwork keeps the console self-contained: nothing is
// loaded from another host (no CDN), so it works offline and in CI.
func TestAssetsNeedNoNetwork(t *testing.T) {
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	files, err := filepath.Glob("assets/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no assets found: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := external.Find(data); m != nil {
			t.Errorf("%s refers to another host: %s", f, m)
		}
	}
}

// TestEveryControlIsLabelled checks the page's static form controls: each
// input and select has a <label for> naming it, so a screen reader and a
// click on the label reach it.
func TestEveryControlIsLabelled(t *testing.T) {
	page, err := os.ReadFile("assets/index.html")
	if err != nil {
		t.Fatal(err)
	}
	tags := regexp.MustCompile(`<(input|select|textarea)\b[^>]*>`).FindAll(page, -1)
	if len(tags) < 10 {
		t.Fatalf("found %d controls; the pattern no longer matches the page", len(tags))
	}
	id := regexp.MustCompile(`\bid="([^"]+)"`)
	for _, tag := range tags {
		m := id.FindSubmatch(tag)
		if m == nil {
			t.Errorf("control without an id cannot be labelled: %s", tag)
			continue
		}
		if !strings.Contains(string(page), `<label for="`+string(m[1])+`"`) {
			t.Errorf("#%s has no <label for>", m[1])
		}
	}
}
