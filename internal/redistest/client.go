package redistest

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewClient returns a go-redis client of s, closed at t.Cleanup. Each call
// gives a separate client (its own connection pool), as separate replicas
// have.
func (s *Server) NewClient(t testing.TB) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(s.URL)
	if err != nil {
		t.Fatalf("redistest: parse %s: %v", s.URL, err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// NewClient returns a client through the proxy whose reads time out after
// readTimeout, closed when t ends: go-redis's retries (MaxRetries, its
// default) then meet the faults the proxy injects.
func (p *FaultProxy) NewClient(t testing.TB, readTimeout time.Duration) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(p.URL)
	if err != nil {
		t.Fatalf("redistest: parse %s: %v", p.URL, err)
	}
	opts.ReadTimeout = readTimeout
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}
