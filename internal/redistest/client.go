package redistest

import (
	"testing"

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
