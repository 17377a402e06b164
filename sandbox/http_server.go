package sandbox

import (
	"log/slog"
	"net/http"
	"time"
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
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}
