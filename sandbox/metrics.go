package sandbox

import (
	"context"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// metricsNamespace starts the name of every series the sandbox exports.
const metricsNamespace = "referrals_sandbox"

// Label caps: a label takes at most this many distinct values; the rest
// are counted under otherLabel, so no caller can grow the series without
// bound (a verified client's id, a failure rule's id).
const (
	MetricsMaxClients = 100
	MetricsMaxRules   = 100
	otherLabel        = "other"
)

// BuildInfo is what referrals_sandbox_build_info reports.
type BuildInfo struct {
	Version string
	Commit  string
}

// metrics holds the sandbox's Prometheus series in a registry of its own (no
// global default registry: two sandboxes in one test process count apart).
type metrics struct {
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

func newMetrics(build BuildInfo, log journal.Log) *metrics {
	m := &metrics{
		requests: counterVec("http_requests_total",
			"Requests answered, by operation (route template), method, status (a status net/http does not name counts as its class, such as 2xx, other past 599; none when a fault closed the connection) and verified client (other for the rest).",
			"operation", "method", "status", "client"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Name: "http_request_duration_seconds",
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
			Namespace: metricsNamespace, Name: "redis_round_trip_duration_seconds",
			Help:    "Time of each Redis round trip, by command.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}, []string{"command"}),
		clients: newLabelCap(MetricsMaxClients),
		rules:   newLabelCap(MetricsMaxRules),
	}
	m.registry = sync.OnceValue(func() *prometheus.Registry {
		buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: metricsNamespace, Name: "build_info",
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
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metricsNamespace, Name: name, Help: help}, labels)
}

// handler serves the registry in the Prometheus text format (or what the
// scraper's Accept header negotiates).
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry(), promhttp.HandlerOpts{})
}

// requestOutcome is what one answered request adds to the series.
type requestOutcome struct {
	operation, method string
	status            int
	endpoint          string
	client            string // verified client id, "" for none
	rule, scenario    string
	tokenIssued       bool
	tokenError        string
	elapsed           time.Duration
}

// observe counts one answered request.
func (m *metrics) observe(o requestOutcome) {
	client := m.clients.value(o.client)
	status := statusLabel(o.status)
	m.requests.WithLabelValues(o.operation, metricMethod(o.method), status, client).Inc()
	m.duration.WithLabelValues(o.operation).Observe(o.elapsed.Seconds())
	if o.rule != "" {
		m.forced.WithLabelValues(m.rules.value(o.rule), o.scenario).Inc()
	}
	switch {
	case o.tokenIssued:
		m.tokens.WithLabelValues(client).Inc()
	case o.endpoint == "token" && o.status >= 400:
		code := o.tokenError
		if code == "" {
			code = otherLabel
		}
		m.tokenErrors.WithLabelValues(code).Inc()
	case (o.endpoint == "api" || o.endpoint == "ping") && (o.rule == "" || o.rule == DelayHeader) && o.status == http.StatusTooManyRequests:
		// A forced 429 names its rule; a delay alone leaves the limiter's.
		m.rateLimited.WithLabelValues(client).Inc()
	}
}

// metricMethod keeps the method label to the methods HTTP defines: a
// client may send any token as a method.
func metricMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodTrace, http.MethodConnect:
		return method
	}
	return otherLabel
}

// labelCap passes through the first max distinct values of a label and
// turns every later one, and "", into otherLabel.
type labelCap struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func newLabelCap(max int) *labelCap {
	return &labelCap{max: max, seen: make(map[string]struct{}, max)}
}

func (c *labelCap) value(v string) string {
	if v == "" {
		return otherLabel
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[v]; ok {
		return v
	}
	if len(c.seen) >= c.max {
		return otherLabel
	}
	c.seen[v] = struct{}{}
	return v
}

// journalCollector reports the journal's size at each scrape. While the
// journal cannot be reached (Redis down) it reports nothing rather than a
// false zero; redis_errors_total says why.
type journalCollector struct{ log journal.Log }

var (
	journalEntriesDesc = prometheus.NewDesc(metricsNamespace+"_journal_entries",
		"Requests the journal keeps now.", nil, nil)
	journalBytesDesc = prometheus.NewDesc(metricsNamespace+"_journal_bytes",
		"Bytes the kept journal entries count against --journal-bytes.", nil, nil)
)

func (c journalCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- journalEntriesDesc
	ch <- journalBytesDesc
}

func (c journalCollector) Collect(ch chan<- prometheus.Metric) {
	// A scrape has no context of its own; Prometheus's default scrape
	// timeout is 10 s, so give up well before it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	entries, bytes, err := c.log.Usage(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(journalEntriesDesc, prometheus.GaugeValue, float64(entries))
	ch <- prometheus.MustNewConstMetric(journalBytesDesc, prometheus.GaugeValue, float64(bytes))
}

// statusLabels are the labels of the statuses net/http names, each its
// number, and of the others from 100 to 599, each its class ("2xx"), made
// once so that counting a request allocates no label. A recording proxy
// passes on whatever status the real service answers: without the classes
// every status from 100 to 999 could become a series.
var statusLabels = func() (l [600]string) {
	for i := 100; i < len(l); i++ {
		if http.StatusText(i) != "" {
			l[i] = strconv.Itoa(i)
		} else {
			l[i] = strconv.Itoa(i/100) + "xx"
		}
	}
	return l
}()

// statusLabel is the status label of status: "none" when no answer was
// written, otherLabel beyond the classes HTTP defines.
func statusLabel(status int) string {
	switch {
	case status == 0:
		return "none"
	case status >= 100 && status < len(statusLabels):
		return statusLabels[status]
	}
	return otherLabel
}

// ObserveCall counts and times one round trip of the shared mode's Redis
// client (backend.CallObserver).
func (m *metrics) ObserveCall(command string, elapsed time.Duration, errKind string) {
	m.redisCalls.WithLabelValues(command).Inc()
	m.redisDuration.WithLabelValues(command).Observe(elapsed.Seconds())
	if errKind != "" {
		m.redisErrors.WithLabelValues(errKind).Inc()
	}
}
