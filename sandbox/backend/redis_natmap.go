package backend

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxNATMapEntries bounds --redis-cluster-nat-map: a cluster has a node
// per entry, and no cluster a sandbox serves has thousands.
const maxNATMapEntries = 1000

// ParseRedisNATMap reads --redis-cluster-nat-map entries, each
// ANNOUNCED=REACHABLE with both sides host:port: the address a cluster
// node announces (CLUSTER SLOTS, MOVED) and the one this replica reaches
// it at. A cluster in containers or behind NAT announces addresses only
// its own network can reach; ioredis's natMap solves the same problem.
func ParseRedisNATMap(entries []string) (map[string]string, error) {
	if len(entries) > maxNATMapEntries {
		return nil, fmt.Errorf("--redis-cluster-nat-map has %d entries; at most %d", len(entries), maxNATMapEntries)
	}
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		announced, reachable, ok := strings.Cut(e, "=")
		if !ok {
			return nil, fmt.Errorf("--redis-cluster-nat-map entry %q: want ANNOUNCED=REACHABLE, each host:port", e)
		}
		for _, addr := range []string{announced, reachable} {
			if host, port, err := net.SplitHostPort(addr); err != nil || host == "" || port == "" {
				return nil, fmt.Errorf("--redis-cluster-nat-map entry %q: %q is not host:port", e, addr)
			}
		}
		if _, dup := m[announced]; dup {
			return nil, fmt.Errorf("--redis-cluster-nat-map maps %s twice", announced)
		}
		m[announced] = reachable
	}
	return m, nil
}

// natDialer dials each address of the cluster at the address m maps it to
// (itself when unmapped), with copts's timeout and TLS: a custom Dialer
// replaces go-redis's, which is what applied them.
func natDialer(m map[string]string, copts *redis.ClusterOptions) func(ctx context.Context, network, addr string) (net.Conn, error) {
	timeout := copts.DialTimeout
	if timeout == 0 {
		timeout = 5 * time.Second // go-redis's default
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		target := addr
		if to, ok := m[addr]; ok {
			target = to
		}
		d := &net.Dialer{Timeout: timeout, KeepAlive: 5 * time.Minute}
		if copts.TLSConfig == nil {
			return d.DialContext(ctx, network, target)
		}
		cfg := copts.TLSConfig.Clone()
		if cfg.ServerName == "" {
			// The node's certificate names the host it announces.
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		return (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, network, target)
	}
}
