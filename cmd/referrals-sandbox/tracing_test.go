package main

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tracing"
)

// otlpReceiver is an OTLP/HTTP trace receiver, as a collector's port 4318
// answers: it keeps every export's bytes and decoded spans.
type otlpReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	raw     [][]byte
	spans   []*tracepb.Span
	service []string
	errs    []string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	rec := &otlpReceiver{}
	rec.Server = httptest.NewServer(http.HandlerFunc(rec.serve))
	t.Cleanup(rec.Close)
	return rec
}

func (rec *otlpReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err == nil && r.Header.Get("Content-Encoding") == "gzip" {
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(body)); err == nil {
			body, err = io.ReadAll(zr)
		}
	}
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/traces":
		rec.errs = append(rec.errs, r.Method+" "+r.URL.Path)
	case r.Header.Get("Content-Type") != "application/x-protobuf":
		rec.errs = append(rec.errs, "content type "+r.Header.Get("Content-Type"))
	case err != nil:
		rec.errs = append(rec.errs, err.Error())
	}
	rec.raw = append(rec.raw, body)
	for _, rs := range req.GetResourceSpans() {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				rec.service = append(rec.service, kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			rec.spans = append(rec.spans, ss.GetSpans()...)
		}
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// spanAttrs are a span's attributes as strings.
func spanAttrs(s *tracepb.Span) map[string]string {
	attrs := map[string]string{}
	for _, kv := range s.GetAttributes() {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			attrs[kv.GetKey()] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			attrs[kv.GetKey()] = strconv.FormatInt(v.IntValue, 10)
		}
	}
	return attrs
}

// TestTracingExportsASpanPerRequest runs serve with the standard
// OTEL_EXPORTER_OTLP_ENDPOINT pointed at an OTLP/HTTP receiver: each
// partner request becomes a server span, a child of the caller's
// traceparent, named by its route template, carrying status, client,
// failure rule and request id, and never the bearer token; SIGTERM flushes
// the spans before exit.
func TestTracingExportsASpanPerRequest(t *testing.T) {
	recv := newOTLPReceiver(t)
	s := startServer(t, t.TempDir(), []string{
		"SANDBOX_ADDR=127.0.0.1:0", "SANDBOX_LOG_FORMAT=json", "SANDBOX_RATE_LIMIT=0",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL, "OTEL_SERVICE_NAME=partner-sandbox",
	})
	var ready readyLine
	if err := json.Unmarshal([]byte(s.lineContaining(t, `"msg":"referrals-sandbox ready"`)), &ready); err != nil {
		t.Fatal(err)
	}
	token := partnerToken(t, ready.TokenURL)

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	call := func(path, requestID string, header map[string]string) int {
		req, err := http.NewRequest(http.MethodGet, ready.RootURL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Traceparent", "00-"+traceID+"-"+parentID+"-01")
		req.Header.Set(sandbox.RequestIDHeader, requestID)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := call("/api/v1/referrals/trials?secretQuery=visible", "trace-trials", nil); code != http.StatusOK {
		t.Fatalf("GET trials: %d", code)
	}
	if code := call("/api/v1/referrals/qualified/ext-12345", "trace-qualified", nil); code != http.StatusNotFound {
		t.Fatalf("GET an unknown qualified referral: %d, want 404", code)
	}
	if code := call("/api/v1/referrals/trials", "trace-refused", map[string]string{sandbox.ScenarioHeader: "rate-limited"}); code != http.StatusTooManyRequests {
		t.Fatalf("GET trials under rate-limited: %d, want 429", code)
	}
	if code, rest := s.stop(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; stderr tail %q", code, rest)
	}

	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.errs) > 0 {
		t.Fatalf("the receiver refused exports: %q", recv.errs)
	}
	for _, raw := range recv.raw {
		for _, secret := range []string{token, "sandbox-partner-secret", "secretQuery", "ext-12345"} {
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("an export carries %q", secret)
			}
		}
	}
	for _, name := range recv.service {
		if name != "partner-sandbox" {
			t.Errorf("service.name %q, want OTEL_SERVICE_NAME's partner-sandbox", name)
		}
	}
	byRequest := map[string]*tracepb.Span{}
	var tokenSpans int
	for _, span := range recv.spans {
		attrs := spanAttrs(span)
		byRequest[attrs["sandbox.request_id"]] = span
		if attrs["http.route"] == "/{tenant}/oauth2/v2.0/token" || span.GetName() == "POST /{tenant}/oauth2/v2.0/token" {
			tokenSpans++
		}
	}
	if tokenSpans != 1 {
		t.Errorf("%d spans of the token request, want 1; spans: %v", tokenSpans, recv.spans)
	}
	want := []struct {
		requestID, name, status, rule string
	}{
		{"trace-trials", "GET /api/v1/referrals/trials", "200", ""},
		{"trace-qualified", "GET /api/v1/referrals/qualified/{external_source_id}", "404", ""},
		{"trace-refused", "GET /api/v1/referrals/trials", "429", "rate-limited"},
	}
	for _, w := range want {
		span := byRequest[w.requestID]
		if span == nil {
			t.Errorf("no span with sandbox.request_id %s; got %d spans", w.requestID, len(recv.spans))
			continue
		}
		attrs := spanAttrs(span)
		if got := hex.EncodeToString(span.GetTraceId()); got != traceID {
			t.Errorf("%s: trace id %s, want the traceparent's %s", w.requestID, got, traceID)
		}
		if got := hex.EncodeToString(span.GetParentSpanId()); got != parentID {
			t.Errorf("%s: parent span id %s, want the traceparent's %s", w.requestID, got, parentID)
		}
		if span.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("%s: kind %v, want server", w.requestID, span.GetKind())
		}
		if span.GetName() != w.name || attrs["http.route"] != w.name[len("GET "):] || attrs["http.request.method"] != "GET" {
			t.Errorf("%s: span %q route %q method %q, want %q", w.requestID, span.GetName(), attrs["http.route"], attrs["http.request.method"], w.name)
		}
		if attrs["http.response.status_code"] != w.status {
			t.Errorf("%s: status %q, want %s", w.requestID, attrs["http.response.status_code"], w.status)
		}
		if attrs["sandbox.client_id"] != "sandbox-partner" {
			t.Errorf("%s: client %q, want sandbox-partner", w.requestID, attrs["sandbox.client_id"])
		}
		if attrs["sandbox.scenario"] != w.rule || (w.rule != "") != (attrs["sandbox.rule_id"] != "") {
			t.Errorf("%s: scenario %q rule %q, want the scenario %q and its rule", w.requestID, attrs["sandbox.scenario"], attrs["sandbox.rule_id"], w.rule)
		}
	}
}

// TestTracingOffBuildsNoExporter: with neither --otlp-endpoint nor an OTLP
// endpoint variable, or with tracing turned off by the standard variables,
// no tracer provider (and so no exporter or batching goroutine) exists.
func TestTracingOffBuildsNoExporter(t *testing.T) {
	for name, environ := range map[string]map[string]string{
		"nothing configured":   {"OTEL_SERVICE_NAME": "partner-sandbox", "OTEL_TRACES_SAMPLER": "always_on"},
		"OTEL_SDK_DISABLED":    {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"},
		"OTEL_TRACES_EXPORTER": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"},
	} {
		t.Run(name, func(t *testing.T) {
			o, c := serveFlags(env{getenv: mapGetenv(environ), stdout: io.Discard})
			if err := o.parse(nil); err != nil {
				t.Fatal(err)
			}
			tp, err := tracing.New(t.Context(), tracing.Config{Endpoint: c.otlpEndpoint, Getenv: mapGetenv(environ)})
			if err != nil || tp != nil {
				t.Fatalf("tracing.New: %v, %v; want no provider", tp, err)
			}
		})
	}
	for name, environ := range map[string]map[string]string{
		"--otlp-endpoint":                    {"SANDBOX_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"},
	} {
		t.Run(name, func(t *testing.T) {
			o, c := serveFlags(env{getenv: mapGetenv(environ), stdout: io.Discard})
			if err := o.parse(nil); err != nil {
				t.Fatal(err)
			}
			cfg := tracing.Config{Endpoint: c.otlpEndpoint, Getenv: mapGetenv(environ)}
			if got, err := cfg.TracesURL(); err != nil || got != "http://127.0.0.1:4318/v1/traces" {
				t.Errorf("traces URL %q, %v", got, err)
			}
			tp, err := tracing.New(t.Context(), cfg)
			if err != nil || tp == nil {
				t.Fatalf("tracing.New: %v, %v; want a provider", tp, err)
			}
			if err := tp.Shutdown(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestTracingRefusesGRPC: the sandbox exports over OTLP/HTTP only, so a
// gRPC protocol is a usage error naming the variable, not spans lost.
func TestTracingRefusesGRPC(t *testing.T) {
	environ := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"SANDBOX_ADDR": "127.0.0.1:0"}
	res := runCLI(t, environ, "serve")
	if res.code != 2 || !bytes.Contains([]byte(res.stderr), []byte("OTEL_EXPORTER_OTLP_PROTOCOL=grpc")) {
		t.Errorf("exit %d, stderr %q; want 2 naming OTEL_EXPORTER_OTLP_PROTOCOL=grpc", res.code, res.stderr)
	}
}
