package main

// Keys of the figures, as results.json names them.
const (
	keyCeiling       = "ceiling"
	keyTrials        = "trials"
	keyPing          = "ping"
	keySigning       = "signing"
	keyToken         = "token"
	keyTokenPeer     = "token_peer"
	keyQualified     = "qualified"
	keyQualifiedData = "qualified_data"
	keyTrialsRedis   = "trials_redis"
	keyTokenRedis    = "token_redis"
	keyQualRedis     = "qualified_redis"
	keyTrialsCluster = "trials_cluster"
	keyTokenCluster  = "token_cluster"
	keyQualCluster   = "qualified_cluster"
	keyList100       = "list_100"
	keyList100k      = "list_100k"
	keyColdStart     = "cold_start"
	keyStartupWall   = "startup_wall"
	keyStartupCPU    = "startup_cpu"
	keyStartupRSS    = "startup_peak_rss"
	keyRSSIdle       = "rss_idle"
	keyRSS100k       = "rss_100k"
	keyBinary        = "binary_size"
	keyTrialsAllocs  = "trials_allocs"
)

// targetKind is how a figure is judged.
type targetKind int

const (
	noTarget     targetKind = iota
	ratioAtLeast            // value/base must be at least limit
	valueBelow              // value must be under limit
	valueAtMost             // value must be at most limit
	baseAtLeast             // base/value must be at least limit: the base outdoes this figure (a peer)
)

// figure is one line of the table: what is measured, against what, and
// the target it must meet.
type figure struct {
	key, label, unit string
	base             string // key of the figure it is compared to; "" for none
	kind             targetKind
	limit            float64
}

// figures lists the table's lines in order, with their targets: issue 27's
// where it set one, issue 7's otherwise.
func figures() []figure {
	return []figure{
		{key: keyCeiling, label: "bare net/http handler (ceiling)", unit: "req/s"},
		{key: keyTrials, label: "GET /api/v1/referrals/trials (auth)", unit: "req/s", base: keyCeiling, kind: ratioAtLeast, limit: 0.85},
		{key: keyTrialsAllocs, label: "allocations per GET /api/v1/referrals/trials (go test -benchmem)", unit: "allocs", kind: valueAtMost, limit: 10},
		{key: keyPing, label: "GET /health/ping (auth)", unit: "req/s", base: keyCeiling, kind: ratioAtLeast, limit: 0.5},
		{key: keySigning, label: "RS256 signing, all cores (token ceiling)", unit: "ops/s"},
		{key: keyToken, label: "POST /oauth2/v2.0/token", unit: "req/s", base: keySigning, kind: ratioAtLeast, limit: 0.95},
		{key: keyTokenPeer, label: "oauth2-mock-server 9.3.0 POST /token (peer, Node; bench/run --peer)", unit: "req/s", base: keyToken, kind: baseAtLeast, limit: 1.2},
		{key: keyQualified, label: "POST /api/v1/referrals/qualified (memory)", unit: "req/s", base: keyCeiling, kind: ratioAtLeast, limit: 0.45},
		{key: keyQualifiedData, label: "POST /api/v1/referrals/qualified (--data)", unit: "req/s", base: keyQualified},
		// Shared mode: one replica with --redis (AOF, appendfsync always)
		// against the embedded store under the same load.
		{key: keyTrialsRedis, label: "GET /api/v1/referrals/trials (auth), --redis", unit: "req/s", base: keyTrials, kind: ratioAtLeast, limit: 0.8},
		{key: keyTokenRedis, label: "POST /oauth2/v2.0/token, --redis", unit: "req/s", base: keyToken},
		{key: keyQualRedis, label: "POST /api/v1/referrals/qualified, --redis", unit: "req/s", base: keyQualified},
		// The same on a Redis Cluster of 3 masters, beside one Redis.
		{key: keyTrialsCluster, label: "GET /api/v1/referrals/trials (auth), --redis-cluster (3 masters)", unit: "req/s", base: keyTrialsRedis},
		{key: keyTokenCluster, label: "POST /oauth2/v2.0/token, --redis-cluster (3 masters)", unit: "req/s", base: keyTokenRedis},
		{key: keyQualCluster, label: "POST /api/v1/referrals/qualified, --redis-cluster (3 masters)", unit: "req/s", base: keyQualRedis},
		{key: keyList100, label: "GET /api/v1/referrals/?limit=50, 100 stored", unit: "req/s", base: keyCeiling, kind: ratioAtLeast, limit: 0.35},
		{key: keyList100k, label: "GET /api/v1/referrals/?limit=50, 100,000 stored", unit: "req/s", base: keyList100, kind: ratioAtLeast, limit: 0.5},
		{key: keyColdStart, label: "cold start: exec to first 200 (median)", unit: "ms", kind: valueBelow, limit: 50},
		// Whole processes of `serve` with no flags (bench/run --only
		// startup): CPU time and peak memory vary less with the machine's
		// load than the wall time does.
		{key: keyStartupWall, label: "start-up: serve, exec to healthy (median)", unit: "ms"},
		{key: keyStartupCPU, label: "start-up: CPU time of the process, start to SIGTERM exit (median)", unit: "ms"},
		{key: keyStartupRSS, label: "start-up: peak resident memory of the process (median)", unit: "MiB"},
		{key: keyRSSIdle, label: "resident memory, idle after start", unit: "MB", kind: valueBelow, limit: 25},
		{key: keyRSS100k, label: "resident memory, 100,000 referrals", unit: "MB", kind: valueAtMost, limit: 80},
		{key: keyBinary, label: "binary size (static, stripped)", unit: "MB"},
	}
}
