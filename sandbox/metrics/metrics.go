// Package metrics holds the sandbox's Prometheus series: what each answered
// request adds (Observe), the shared mode's Redis round trips (ObserveCall),
// the journal's size and the build, served by Handler in a registry of the
// sandbox's own. The HTTP layer decides what a request's labels are; this
// package decides how they become bounded series.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package metrics

import (
	"net/http"
	"runtime"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// namespace starts the name of every series the sandbox exports.
const namespace = "referrals_sandbox"

// BuildInfo is what referrals_sandbox_build_info reports.
type BuildInfo struct {
	Version string
	Commit  string
}

// Metrics holds the sandbox's Prometheus series in a registry of its own (no
// global default registry: two sandboxes in one test process count apart).
type Metrics struct {
	// registry gathers the series below with the build, journal, Go
	// runtime and process collectors. Only a scrape reads it, so it is
	// built at the first: registering checks every descriptor, and the
	// Go collector describes the whole runtime, which a start that is
	// never scraped need not pay for. The series count from the start.
	registry func() *prometheus.Registry

	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	forced      *prometheus.CounterVec
	tokens      *prometheus.CounterVec
	tokenErrors *prometheus.CounterVec
	rateLimited *prometheus.CounterVec

	redisCalls    *prometheus.CounterVec
	redisErrors   *prometheus.CounterVec
	redisDuration *prometheus.HistogramVec

	clients *labelCap
	rules   *labelCap
}

// latencyBuckets run from 1 ms to 10 s: a sandbox answers in milliseconds
// unless a rule delays it (scenarios.MaxDelay).
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// New makes the series of one sandbox, named for build, with log's size
// read at each scrape.
func New(build BuildInfo, log journal.Log) *Metrics {
	m := &Metrics{
		requests: counterVec("http_requests_total",
			"Requests answered, by operation (route template), method, status (a status net/http does not name counts as its class, such as 2xx, other past 599; none when a fault closed the connection) and verified client (other for the rest).",
			"operation", "method", "status", "client"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "http_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by operation; forced delays included.",
			Buckets: latencyBuckets,
		}, []string{"operation"}),
		forced: counterVec("forced_answers_total",
			"Requests a failure rule or an X-Sandbox-* header acted on (status, fault or delay), by rule id and named scenario.",
			"rule", "scenario"),
		tokens: counterVec("tokens_issued_total",
			"Access tokens issued, by client.",
			"client"),
		tokenErrors: counterVec("tokens_refused_total",
			"Token requests refused, by the token endpoint's error code.",
			"error"),
		rateLimited: counterVec("rate_limited_total",
			"Requests refused with 429 by the rate limiter (not forced ones), by client (other: unverified tokens' shared bucket).",
			"client"),
		redisCalls: counterVec("redis_round_trips_total",
			"Round trips to Redis in shared mode, by command (pipeline for a pipeline or transaction).",
			"command"),
		redisErrors: counterVec("redis_errors_total",
			"Failed Redis round trips, by kind: timeout, connection, reply (an error answer), conflict (a transaction retried), other.",
			"kind"),
		redisDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "redis_round_trip_duration_seconds",
			Help:    "Time of each Redis round trip, by command.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}, []string{"command"}),
		clients: newLabelCap(MaxClients),
		rules:   newLabelCap(MaxRules),
	}
	m.registry = sync.OnceValue(func() *prometheus.Registry {
		buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "build_info",
			Help:        "Always 1; the labels name the build.",
			ConstLabels: prometheus.Labels{"version": build.Version, "commit": build.Commit, "goversion": runtime.Version()},
		})
		buildInfo.Set(1)
		registry := prometheus.NewRegistry()
		registry.MustRegister(
			m.requests, m.duration, m.forced, m.tokens, m.tokenErrors, m.rateLimited,
			m.redisCalls, m.redisErrors, m.redisDuration, buildInfo,
			journalCollector{log: log},
			collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		)
		return registry
	})
	return m
}

// counterVec is a counter of the sandbox's namespace with those labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, labels)
}

// Handler serves the registry in the Prometheus text format (or what the
// scraper's Accept header negotiates). It does not guard the series: the
// caller decides who may scrape.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry(), promhttp.HandlerOpts{})
}
