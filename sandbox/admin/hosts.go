package admin

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// hostPolicy is the set of host names the admin API answers to. Without it a
// web page could rebind its own DNS name to 127.0.0.1 and, being then "same
// origin" with the sandbox in the browser's eyes, read partners' records
// from /__sandbox/data/. Ports are ignored: a rebinding attack uses the
// sandbox's own port, and a published container port (docker run -p
// 18080:8080) makes the Host port differ from the listen port.
type hostPolicy struct {
	names map[string]bool
}

// newHostPolicy allows loopback names plus extra: host names, IP addresses
// or host:port pairs (the port is ignored). A URL or an empty entry is an
// error naming it.
func newHostPolicy(extra []string) (hostPolicy, error) {
	p := hostPolicy{names: map[string]bool{}}
	for _, e := range extra {
		if strings.Contains(e, "/") || strings.Contains(e, "*") {
			return p, fmt.Errorf("--allowed-host %q: give a host name or IP address (optionally with :port), not a URL or pattern", e)
		}
		h := normalizeHost(e)
		if h == "" {
			return p, fmt.Errorf("--allowed-host %q: no host name in it", e)
		}
		p.names[h] = true
	}
	return p, nil
}

// allows reports whether host (a Host header or an Origin's host, with or
// without a port) names this sandbox: a loopback name, the address the
// connection arrived on (local, may be nil), or an allowed host.
func (p hostPolicy) allows(host string, local net.Addr) bool {
	h := normalizeHost(host)
	if h == "" {
		return false
	}
	if h == "localhost" || p.names[h] {
		return true
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	if ip.Unmap().IsLoopback() {
		return true
	}
	// The address the client connected to, when it is an IP literal in
	// Host, cannot have been rebound: it is the listen address (or, for a
	// wildcard listen address, the interface the client reached).
	if tcp, ok := local.(*net.TCPAddr); ok {
		if own, ok := netip.AddrFromSlice(tcp.IP); ok && own.Unmap() == ip.Unmap() {
			return true
		}
	}
	return false
}

// normalizeHost lowercases a host, drops its port, IPv6 brackets and a
// trailing dot, and writes IP addresses canonically; "" when nothing is
// left.
func normalizeHost(hostport string) string {
	h := strings.TrimSpace(hostport)
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Unmap().String()
	}
	return h
}

// ConfiguredHosts is every host name the sandbox is configured to be
// reached at, for Config.AllowedHosts: the listen address's host when it
// is a name, the --public-url host, the --tls-host names and
// --allowed-host.
func ConfiguredHosts(listenAddr, publicURL string, tlsHosts, allowed []string) ([]string, error) {
	hosts := append([]string(nil), allowed...)
	// ":8080" or "0.0.0.0:8080" name no host; the connection's own address
	// covers IP literals.
	if h := normalizeHost(listenAddr); h != "" {
		if ip, err := netip.ParseAddr(h); err != nil || !ip.IsUnspecified() {
			hosts = append(hosts, h)
		}
	}
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || u.Hostname() == "" {
			return nil, fmt.Errorf("public URL %q has no host", publicURL)
		}
		hosts = append(hosts, u.Hostname())
	}
	return append(hosts, tlsHosts...), nil
}
