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
	if suppressed > 0 {
		l.log.Warn(msg, "suppressed", suppressed)
	} else {
		l.log.Warn(msg)
	}
	return len(p), nil
}
