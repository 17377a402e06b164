// Package tracing builds the OpenTelemetry tracer provider that exports the
// sandbox's spans over OTLP/HTTP, from serve's --otlp-endpoint and the
// standard OTEL_* environment variables. With neither configured it builds
// nothing: no exporter, no batching goroutine, nothing sent.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// DefaultServiceName is the service.name of the sandbox's spans unless
// OTEL_SERVICE_NAME names another.
const DefaultServiceName = "referrals-sandbox"

// tracesPath is where an OTLP/HTTP receiver takes spans under its base URL
// (OTLP specification, "OTLP/HTTP Request").
const tracesPath = "v1/traces"

// The standard variables this package reads through Config.Getenv. The
// exporter's other OTEL_EXPORTER_OTLP_* variables (headers, timeout,
// compression, certificate, protocol) and the sampler's are read by the
// OpenTelemetry SDK itself.
const (
	envEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envServiceName    = "OTEL_SERVICE_NAME"
	envSDKDisabled    = "OTEL_SDK_DISABLED"
	envTracesExporter = "OTEL_TRACES_EXPORTER"
)

// Config says where spans go. The zero value (with a Getenv that finds
// nothing) turns tracing off.
type Config struct {
	// Endpoint is serve's --otlp-endpoint: the base URL of an OTLP/HTTP
	// receiver (http://collector:4318); spans go to its /v1/traces. It wins
	// over the environment.
	Endpoint string
	// Getenv reads the OTEL_* variables that decide whether and where to
	// export; nil reads none.
	Getenv func(string) string
	// ServiceVersion is the build's version, the spans' service.version.
	ServiceVersion string
}

// TracesURL is the URL spans are posted to, or "" when tracing is off:
// --otlp-endpoint, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
// OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces appended, as the OTLP
// exporter specification resolves them. OTEL_SDK_DISABLED=true and
// OTEL_TRACES_EXPORTER=none turn tracing off whatever the endpoint.
func (c Config) TracesURL() (string, error) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if strings.EqualFold(strings.TrimSpace(getenv(envSDKDisabled)), "true") {
		return "", nil
	}
	switch exporter := strings.TrimSpace(getenv(envTracesExporter)); exporter {
	case "", "otlp":
	case "none":
		return "", nil
	default:
		return "", fmt.Errorf("%s=%s: the sandbox exports spans only over OTLP (otlp or none)", envTracesExporter, exporter)
	}
	var raw string
	switch {
	case c.Endpoint != "":
		raw = joinTracesPath(c.Endpoint)
	case getenv(envTracesEndpoint) != "":
		raw = getenv(envTracesEndpoint)
	case getenv(envEndpoint) != "":
		raw = joinTracesPath(getenv(envEndpoint))
	default:
		return "", nil
	}
	for _, name := range []string{envTracesProtocol, envProtocol} {
		switch p := getenv(name); p {
		case "", "http/protobuf", "http/json":
		default:
			return "", fmt.Errorf("%s=%s: the sandbox exports spans over OTLP/HTTP only (http/protobuf or http/json); point it at the collector's OTLP/HTTP port, usually 4318", name, p)
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("OTLP endpoint %q: want an http:// or https:// URL such as http://collector:4318", raw)
	}
	return raw, nil
}

// joinTracesPath appends /v1/traces to a receiver's base URL.
func joinTracesPath(base string) string {
	return strings.TrimRight(base, "/") + "/" + tracesPath
}

// New builds the tracer provider, or returns nil when tracing is off (see
// TracesURL). Its Shutdown flushes the spans still batched: call it once
// the server has stopped taking requests.
func New(ctx context.Context, cfg Config) (*sdktrace.TracerProvider, error) {
	endpoint, err := cfg.TracesURL()
	if err != nil || endpoint == "" {
		return nil, err
	}
	// The exporter connects on the first export, not here: a collector
	// that is down costs failed exports (logged by the SDK), never a
	// failed start.
	exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter for %s: %w", endpoint, err)
	}
	res, err := newResource(ctx, cfg)
	if err != nil {
		return nil, errors.Join(err, exporter.Shutdown(ctx))
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res)), nil
}

// newResource names the service: referrals-sandbox and the build's
// version, then OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME, each
// winning over the one before, as the specification orders them.
func newResource(ctx context.Context, cfg Config) (*resource.Resource, error) {
	own := []attribute.KeyValue{attribute.String("service.name", DefaultServiceName)}
	if cfg.ServiceVersion != "" {
		own = append(own, attribute.String("service.version", cfg.ServiceVersion))
	}
	detectors := []resource.Option{resource.WithAttributes(own...), resource.WithFromEnv()}
	if cfg.Getenv != nil {
		if name := cfg.Getenv(envServiceName); name != "" {
			detectors = append(detectors, resource.WithAttributes(attribute.String("service.name", name)))
		}
	}
	res, err := resource.New(ctx, detectors...)
	if err != nil {
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	return res, nil
}
