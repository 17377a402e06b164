package sandbox

import (
	"log"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/logthrottle"
)

// Limits of the HTTP server, against slow or hostile clients. Writes have no
// deadline: a hang fault and delays must be able to hold a response open.
const (
	// ReadHeaderTimeout drops a client that sends its headers too slowly.
	ReadHeaderTimeout = 10 * time.Second
	// ReadTimeout bounds the whole request, body included, so a client
	// dribbling a body cannot hold a handler forever. net/http also ends the
	// request's context then, which caps a hang fault at this long; it is
	// well above the longest delay a rule may ask for (scenarios.MaxDelay).
	ReadTimeout = 2 * time.Minute
	// IdleTimeout closes keep-alive connections nobody uses.
	IdleTimeout = 2 * time.Minute
	// MaxHeaderBytes answers 431 to larger request headers.
	MaxHeaderBytes = 64 << 10
)

// NewHTTPServer returns the http.Server the binary runs h on, with the
// limits above; its own error log goes to logger at warn level.
func NewHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          log.New(serverErrorLog{log: logger, throttle: logthrottle.New(time.Second, time.Now)}, "", 0),
	}
}

// serverErrorLog writes net/http's own error lines (a failed TLS
// handshake, an accept error) to the logger at warn level, at most one a
// second with a count of those held back: anyone who can reach the port
// can open connections by the thousand, each worth a line.
type serverErrorLog struct {
	log      *slog.Logger
	throttle *logthrottle.Throttle
}

// Write logs one line of net/http's error log, or counts it.
func (l serverErrorLog) Write(p []byte) (int, error) {
	ok, suppressed := l.throttle.Allow("server")
	if !ok {
		return len(p), nil
	}
	msg := strings.TrimSpace(string(p))
	if len(msg) > 512 {
		msg = strings.ToValidUTF8(msg[:512], "") + "…"
	}
	var attrs []any
	if suppressed > 0 {
		attrs = append(attrs, "suppressed", suppressed)
	}
	if distrusted(msg) {
		attrs = append(attrs, "hint", untrustedCAHint)
	}
	l.log.Warn(msg, attrs...)
	return len(p), nil
}

// untrustedCAHint names the cause a client library often hides: msal-node
// reports only endpoints_resolution_error when it cannot verify the
// sandbox's certificate.
const untrustedCAHint = "a client gave up on the TLS handshake, most often because it does not trust the sandbox's CA (msal-node then reports endpoints_resolution_error): trust the ca.pem the ready line names (ca_cert) once with 'referrals-sandbox trust', or per process with NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE or SSL_CERT_FILE"

// distrusted reports whether msg is a failed TLS handshake. Clients that
// refuse the certificate do not say so alike: OpenSSL's and Go's send an
// alert that may arrive as unknown_ca, bad_certificate or an unreadable
// record, Node's simply close (EOF), so every failed handshake gets the
// hint: with a local CA no system trusts, distrust is the usual cause.
func distrusted(msg string) bool {
	return strings.Contains(msg, "TLS handshake error")
}
