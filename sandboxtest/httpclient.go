package sandboxtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"
)

// newHTTPClient builds the client HTTPClient returns: caPEM (when set) is
// its only trusted root, and connections to any of routed, on any port, go
// to sandboxAddr instead. TLS still checks the certificate against the name
// in the URL, so a routed host must be in the sandbox's certificate.
func newHTTPClient(sandboxAddr string, caPEM []byte, routed []string) (*http.Client, error) {
	var tlsConfig *tls.Config
	if caPEM != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("sandbox CA certificate is not valid PEM")
		}
		tlsConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	routes := make(map[string]bool, len(routed))
	for _, host := range routed {
		routes[strings.ToLower(host)] = true
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	transport := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			if host, _, err := net.SplitHostPort(address); err == nil && routes[strings.ToLower(host)] {
				address = sandboxAddr
			}
			return dialer.DialContext(ctx, network, address)
		},
		TLSClientConfig:     tlsConfig,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
	}
	return &http.Client{Transport: transport}, nil
}
