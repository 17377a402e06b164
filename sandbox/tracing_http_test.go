package sandbox_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// tracedSandbox serves a sandbox whose spans go to an in-memory exporter
// as each ends. stop closes the server, which waits for every handler
// (and so every span) to end, and returns the spans.
func tracedSandbox(t *testing.T) (s *testSandbox, stop func(want int) tracetest.SpanStubs) {
	t.Helper()
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	s, ts := serveSandbox(t, sandbox.Config{TracerProvider: tp})
	return s, func(want int) tracetest.SpanStubs {
		ts.Close()
		// A span ends when its handler returns, which for a reset
		// connection is after the client saw the reset, and the server's
		// Close does not wait for a hijacked connection's handler.
		testutil.Eventually(t, 10*time.Second, func() error {
			if n := len(exporter.GetSpans()); n < want {
				return fmt.Errorf("%d spans ended, want %d", n, want)
			}
			return nil
		})
		return exporter.GetSpans()
	}
}

func attrsOf(span tracetest.SpanStub) map[attribute.Key]attribute.Value {
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range span.Attributes {
		attrs[kv.Key] = kv.Value
	}
	return attrs
}

// TestTracingSpanFields: a fault shows on its span as an error with the
// rule and the fault; a made-up method and an unmatched path never name a
// span; a request without a valid traceparent starts a trace of its own;
// the admin API and the health check make no span.
func TestTracingSpanFields(t *testing.T) {
	s, stop := tracedSandbox(t)
	tok := s.token(partner)
	ruleID := s.addRule(map[string]any{"endpoint": "api", "fault": "reset", "times": 1})
	if _, err := s.send(freshConnClient(t, 0), request{path: trialsPath, token: tok, plain: true, headers: map[string]string{sandbox.RequestIDHeader: "reset-call"}}); err == nil {
		t.Fatal("the reset rule answered")
	}
	s.do(request{method: "BREW", path: trialsPath, token: tok, unknownRoute: true, headers: map[string]string{sandbox.RequestIDHeader: "brew-call", "Traceparent": "00-not-a-trace-01"}})
	s.do(request{path: "/api/v1/no/such/route/123", token: tok, unknownRoute: true, headers: map[string]string{sandbox.RequestIDHeader: "unmatched-call"}})
	s.do(request{path: "/__sandbox/health"})
	s.admin(http.MethodGet, "/__sandbox/journal", nil)

	byID := map[string]tracetest.SpanStub{}
	for _, span := range stop(4) { // the token request and the three below
		id := attrsOf(span)["sandbox.request_id"].AsString()
		if id == "" {
			t.Errorf("span %q has no request id", span.Name)
		}
		if route := attrsOf(span)["http.route"].AsString(); len(route) >= 11 && route[:11] == "/__sandbox/" {
			t.Errorf("the admin API or health check made span %q", span.Name)
		}
		byID[id] = span
	}
	reset := byID["reset-call"]
	attrs := attrsOf(reset)
	if reset.Name != "GET "+trialsPath || attrs["sandbox.fault"].AsString() != "reset" || attrs["sandbox.rule_id"].AsString() != ruleID ||
		attrs["sandbox.client_id"].AsString() != partner || reset.Status.Code != codes.Error {
		t.Errorf("reset span %q status %v attributes %v; want the rule %s, fault reset, client %s, error", reset.Name, reset.Status, attrs, ruleID, partner)
	}
	if _, ok := attrs["http.response.status_code"]; ok {
		t.Errorf("a reset connection has a status on its span: %v", attrs["http.response.status_code"])
	}
	brew := byID["brew-call"]
	if brew.Name != "HTTP "+trialsPath || attrsOf(brew)["http.request.method"].AsString() != "_OTHER" {
		t.Errorf("made-up method: span %q, method %v; want HTTP %s and _OTHER", brew.Name, attrsOf(brew)["http.request.method"], trialsPath)
	}
	if brew.Parent.IsValid() || !brew.SpanContext.TraceID().IsValid() {
		t.Errorf("an invalid traceparent became the parent %v", brew.Parent)
	}
	unmatched := byID["unmatched-call"]
	if _, ok := attrsOf(unmatched)["http.route"]; unmatched.Name != "GET" || ok {
		t.Errorf("unmatched path: span %q, route %v; want GET and no route", unmatched.Name, attrsOf(unmatched)["http.route"])
	}
	if len(byID) != 4 { // the token request and the three above
		t.Errorf("%d spans, want 4: %v", len(byID), byID)
	}
}
