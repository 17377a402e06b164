package sandbox_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestOpenRedisErrorsHideThePassword: whatever is wrong with --redis, the
// error names where it points and never the password in the URL.
func TestOpenRedisErrorsHideThePassword(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	_ = ln.Close()
	const password = "pa55-w0rd-XYZ"
	tests := []struct{ name, url, want string }{
		{"unreachable", "redis://:" + password + "@" + closed + "/0", "redis at " + closed + " does not answer"},
		{"database not a number", "redis://:" + password + "@" + closed + "/first", "redis://" + closed + "/first"},
		{"not a URL", "redis://:" + password + "@[::1/0", "--redis is not a URL"},
		{"other scheme", "http://:" + password + "@" + closed, "--redis must start with redis://"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := sandbox.Open(sandbox.Config{Redis: backend.RedisConfig{URL: tc.url}})
			if err == nil {
				_ = in.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), password) {
				t.Errorf("error %q: want it to contain %q and not the password", err, tc.want)
			}
		})
	}
	if _, err := sandbox.Open(sandbox.Config{DataFile: "x.db", Redis: backend.RedisConfig{URL: "redis://" + closed}}); err == nil || !strings.Contains(err.Error(), "--data and --redis") {
		t.Errorf("--data with --redis: %v", err)
	}
}

// TestRedisLocation is what the ready line shows of a --redis URL.
func TestRedisLocation(t *testing.T) {
	for raw, want := range map[string]string{
		"redis://:secret@cache:6380/4":        "redis://cache:6380/4",
		"rediss://user:secret@cache.internal": "rediss://cache.internal:6379/0",
		"redis://127.0.0.1:6379":              "redis://127.0.0.1:6379/0",
	} {
		if got := backend.RedisLocation(raw); got != want {
			t.Errorf("RedisLocation(%q) = %q, want %q", raw, got, want)
		}
	}
}

// emptyOnce is a store that answers its first Empty with true: the
// moment another replica on the same Redis loads the fixtures between
// this one's Empty and Load.
type emptyOnce struct {
	store.Store
	asked bool
}

func (s *emptyOnce) Empty(ctx context.Context) (bool, error) {
	if !s.asked {
		s.asked = true
		return true, nil
	}
	return s.Store.Empty(ctx)
}

// TestSeedLosesTheRaceQuietly: two replicas start together on an empty
// Redis; the one whose Load finds the other's records starts anyway, and
// serves those records.
func TestSeedLosesTheRaceQuietly(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	st, err := store.OpenRedis(c)
	if err != nil {
		t.Fatal(err)
	}
	set, err := fixtures.Default()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Load(context.Background(), set); err != nil { // the replica that won
		t.Fatal(err)
	}
	sb := newSandbox(t, useStore(&emptyOnce{Store: st}))
	listed, _ := sb.collect(referralsList, sb.token(partner), "500")
	if len(listed) != fixtureReferrals {
		t.Errorf("the replica that lost the race lists %d referrals, want the %d fixtures", len(listed), fixtureReferrals)
	}
}
