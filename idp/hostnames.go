package idp

import (
	"net"
	"net/url"
	"strings"
)

// HostNames is the set of host names this sandbox serves: the loopback
// names (localhost, 127.0.0.0/8, ::1), the --tls-host names and the host of
// --public-url. A name is served on any port, because a container's port is
// often mapped to another one on the host (sandbox:8080 inside compose is
// localhost:18080 outside). The issuer rule uses it (a token issued through
// one of these names is valid through any other) and so can anything else
// that must tell the sandbox's own names from others (a Host allow-list).
type HostNames struct {
	names map[string]bool
}

// NewHostNames returns the loopback names plus the host of publicURL (when
// set) and extra (host names, with or without a port).
func NewHostNames(publicURL string, extra []string) HostNames {
	h := HostNames{names: map[string]bool{"localhost": true}}
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" {
		h.names[normalHost(u.Host)] = true
	}
	for _, name := range extra {
		if name = normalHost(name); name != "" {
			h.names[name] = true
		}
	}
	return h
}

// Serves reports whether host (a Host header or URL host, with or without a
// port) is one of the sandbox's names.
func (h HostNames) Serves(host string) bool {
	name := normalHost(host)
	if name == "" {
		return false
	}
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return true
	}
	return h.names[name]
}

// normalHost lowercases host and drops its port and IPv6 brackets.
func normalHost(host string) string {
	host = strings.ToLower(strings.TrimSpace(host))
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}
