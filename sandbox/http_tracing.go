package sandbox

import (
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the sandbox's spans.
const tracerName = "github.com/referrals-sandbox/referrals-sandbox/sandbox"

// The attributes of a request's span: the HTTP ones of the OpenTelemetry
// semantic conventions, and the sandbox's own. None carries a token, a
// secret, a query string, a body or a raw path.
const (
	attrMethod    = "http.request.method"
	attrRoute     = "http.route"
	attrStatus    = "http.response.status_code"
	attrClientID  = "sandbox.client_id"
	attrRuleID    = "sandbox.rule_id"
	attrScenario  = "sandbox.scenario"
	attrFault     = "sandbox.fault"
	attrRequestID = "sandbox.request_id"
)

// otherMethod stands for a method outside HTTP's registered ones, and
// otherMethodName names its spans (semantic conventions,
// http.request.method and "Name"): a client's made-up method never
// becomes an attribute or a span name.
const (
	otherMethod     = "_OTHER"
	otherMethodName = "HTTP"
)

// knownMethods are the methods a span names as sent.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodConnect: true, http.MethodOptions: true,
	http.MethodTrace: true,
}

// withTracing gives every request the journal records (the identity
// provider, the API and the ping; not the admin API, the console or the
// health check, as with the journal) a server span, a child of the
// caller's W3C traceparent when it sends one. Without a tracer provider it
// is not in the chain at all. It sits inside withRequestID and outside
// withMetrics, whose recorder and notes it reads once the answer is
// written. Spans are on real time, as the caller's are, not on the
// sandbox clock.
func (s *Server) withTracing(next layer) layer {
	if s.cfg.TracerProvider == nil {
		return next
	}
	tracer := s.cfg.TracerProvider.Tracer(tracerName)
	propagator := propagation.TraceContext{}
	return func(w http.ResponseWriter, r *http.Request) exchange.Outcome {
		if !journaled(r) {
			return next(w, r)
		}
		method := r.Method
		if !knownMethods[method] {
			method = otherMethod
		}
		parent := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		_, span := tracer.Start(parent, spanMethod(method), trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		st, r := withState(r)
		out := next(w, r)
		if span.IsRecording() {
			s.describeSpan(span, r, method, st, out)
		}
		return out
	}
}

// describeSpan names span by its route and sets what the request's
// layers learned: status, verified client, the failure rule that answered.
func (s *Server) describeSpan(span trace.Span, r *http.Request, method string, st *requestState, out exchange.Outcome) {
	o := s.outcome(r, st.metricsRec.status, out, &st.obs, 0)
	attrs := []attribute.KeyValue{attribute.String(attrMethod, method), attribute.String(attrRequestID, st.id)}
	if o.Operation != unmatchedOperation {
		span.SetName(spanMethod(method) + " " + o.Operation)
		attrs = append(attrs, attribute.String(attrRoute, o.Operation))
	}
	if o.Status != 0 {
		attrs = append(attrs, attribute.Int(attrStatus, o.Status))
	}
	if o.Client != "" {
		attrs = append(attrs, attribute.String(attrClientID, o.Client))
	}
	if o.Rule != "" {
		attrs = append(attrs, attribute.String(attrRuleID, o.Rule))
	}
	if o.Scenario != "" {
		attrs = append(attrs, attribute.String(attrScenario, o.Scenario))
	}
	if out.Ruling.Fault != "" {
		attrs = append(attrs, attribute.String(attrFault, string(out.Ruling.Fault)))
	}
	span.SetAttributes(attrs...)
	// A server span is an error when the server failed (5xx) or the
	// connection ended without an answer (a fault); a 4xx is the
	// caller's (semantic conventions, "Status").
	if o.Status >= 500 || o.Status == 0 {
		span.SetStatus(codes.Error, "")
	}
}

// spanMethod is how a span's name spells method.
func spanMethod(method string) string {
	if method == otherMethod {
		return otherMethodName
	}
	return method
}
