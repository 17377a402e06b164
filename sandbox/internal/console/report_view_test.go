package console_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// reportStub serves the sandbox with GET /__sandbox/report replaced: by a
// fixed report when body is set, else by a 404, as a sandbox without the
// report answers. It checks the view's rendering whatever the report engine
// concludes.
func reportStub(t *testing.T, body string) string {
	t.Helper()
	in, _ := newSandbox(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/__sandbox/report" {
			in.Server.ServeHTTP(w, r)
			return
		}
		if body == "" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"type":"urn:referrals-sandbox:problem:not-found","title":"Not Found","status":404,"detail":"no such path: /__sandbox/report"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestConsoleReportRendersChecks(t *testing.T) {
	const evidenceID = "evidence-request-1"
	report := `{"generatedAt": "2026-11-21T14:03:07.123456Z", "clients": [{
		"clientId": "sandbox-partner", "requests": 3,
		"program": {"label": "run ci-job-7", "run": "ci-job-7", "userAgent": "msal-node/7.2", "connections": 2},
		"checks": [
			{"id": "renews-early", "title": "Renews the token early", "result": "not-exercised", "explanation": "no token neared expiry", "evidence": []},
			{"id": "reuses-tokens", "title": "Reuses tokens", "result": "pass", "explanation": "1 token for 3 calls", "evidence": []},
			{"id": "json-posts", "title": "POSTs declare JSON", "result": "fail", "explanation": "1 POST sent text/plain", "evidence": ["` + evidenceID + `", "gone-from-journal"]},
			{"id": "ping", "title": "Pings sparingly", "result": "warn", "explanation": "pinged before every call", "evidence": []}
		],
		"summary": {"pass": 1, "fail": 1, "warn": 1, "notExercised": 1}}]}`
	base := reportStub(t, report)
	tok := token(t, base, "sandbox-partner")
	send(t, base, call{path: "/api/v1/referrals/trials", token: tok, headers: map[string]string{"X-Request-Id": evidenceID}})

	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "journal")
	waitFor(t, ctx, "the evidence request in the journal", fmt.Sprintf(`!!document.querySelector('tr[data-request-id=%s]')`, jsString(evidenceID)))
	do(t, ctx, "open the report", chromedp.Click(chromedp.ID("tab-report")))
	waitFor(t, ctx, "the report's checks", `document.querySelectorAll('section.report-client li.check').length === 4`)

	order := eval[string](t, ctx, `[...document.querySelectorAll('li.check')].map(li => li.dataset.result).join(',')`)
	if order != "fail,warn,pass,not-exercised" {
		t.Errorf("checks in order %q, want failures first", order)
	}
	summary := eval[string](t, ctx, `document.querySelector('section.report-client .card-head').textContent`)
	for _, want := range []string{"sandbox-partner", "program run ci-job-7 · 2 connections", "3 requests", "1 fail", "1 warn", "1 pass", "1 not exercised"} {
		if !strings.Contains(summary, want) {
			t.Errorf("report header %q lacks %q", summary, want)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('li.check.result-fail button.evidence').length`); n != 1 {
		t.Errorf("%d evidence links, want 1 (the request still in the journal; the other shown as text)", n)
	}
	do(t, ctx, "follow the evidence", chromedp.Click(chromedp.CSS(`li.check.result-fail button.evidence`)))
	waitFor(t, ctx, "the journal with the evidence's details",
		fmt.Sprintf(`!document.getElementById('view-journal').hidden && document.getElementById('journal-details').textContent.includes(%s)`, jsString(evidenceID)))
}

func TestConsoleReportUnavailable(t *testing.T) {
	base := reportStub(t, "")
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "report")
	waitFor(t, ctx, "the report unavailable notice", `!!document.querySelector('#report [data-report="unavailable"]')`)
	if text := eval[string](t, ctx, `document.getElementById('report').textContent`); !strings.Contains(text, "Report unavailable") {
		t.Errorf("report view reads %q, want \"Report unavailable\"", text)
	}
}

// TestConsoleReportListsUnknownClientsApart makes a token request with a
// client id the sandbox does not know, and one real client's single
// request: the report view judges the real client ("1 request") and lists
// the unknown id apart with what it tried, never as a client card.
func TestConsoleReportListsUnknownClientsApart(t *testing.T) {
	_, base := newSandbox(t)
	status, header, _ := requestToken(t, base, "nobody", "wrong-secret")
	if status == http.StatusOK {
		t.Fatal("a token for an unknown client")
	}
	token(t, base, "sandbox-partner") // its one request

	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "report")
	waitFor(t, ctx, "the unknown clients list", `!!document.querySelector('#report .report-unknown tr[data-client-id="nobody"]')`)
	if n := eval[int](t, ctx, `document.querySelectorAll('section.report-client[data-client-id="nobody"]').length`); n != 0 {
		t.Error("the report judges the unknown client nobody as a client")
	}
	row := eval[string](t, ctx, `document.querySelector('#report .report-unknown tr[data-client-id="nobody"]').textContent`)
	for _, want := range []string{"POST", "/oauth2/v2.0/token", fmt.Sprint(status), header.Get("X-Request-Id")} {
		if !strings.Contains(row, want) {
			t.Errorf("unknown client row %q lacks %q", row, want)
		}
	}
	head := eval[string](t, ctx, `document.querySelector('section.report-client[data-client-id="sandbox-partner"] .card-head').textContent`)
	if !strings.Contains(head, "1 request") || strings.Contains(head, "1 requests") {
		t.Errorf("report header %q, want \"1 request\"", head)
	}
	noStrayNull(t, ctx)
}

// TestConsoleCountsOneRequestInTheSingular checks the journal's count with
// a single request: "1 request", not "1 requests".
func TestConsoleCountsOneRequestInTheSingular(t *testing.T) {
	_, base := newSandbox(t)
	send(t, base, call{path: "/health/ping"})
	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "journal")
	waitFor(t, ctx, "the journal's count", `document.getElementById('journal-count').textContent !== ''`)
	if got := eval[string](t, ctx, `document.getElementById('journal-count').textContent`); got != "1 request" {
		t.Errorf("journal count reads %q, want \"1 request\"", got)
	}
}
