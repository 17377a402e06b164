package main

import (
	"errors"
	"log/slog"
	"net"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// serveMetrics starts the --metrics-addr listener: the metrics alone, at
// /metrics (Prometheus's default path) and at the admin API's path, with no
// admin token, for a scraper on a network the API's callers do not reach.
// stop closes it.
func serveMetrics(logger *slog.Logger, in *sandbox.Instance, addr string) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, listenError(addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", in.Server.MetricsHandler())
	mux.Handle("GET "+sandbox.MetricsPath, in.Server.MetricsHandler())
	srv := sandbox.NewHTTPServer(mux, logger)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics listener stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	logger.Info("metrics listening", "metrics_url", "http://"+advertisedHost(ln.Addr().(*net.TCPAddr))+"/metrics")
	return func() { _ = srv.Close() }, nil
}
