package redistest

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestStartStopRestart(t *testing.T) {
	s := Start(t)
	if err := ping(s.Addr); err != nil {
		t.Fatalf("started server: %v", err)
	}
	s.Stop(t)
	if err := ping(s.Addr); err == nil {
		t.Fatal("stopped server still answers")
	}
	s.Restart(t)
	if err := ping(s.Addr); err != nil {
		t.Fatalf("restarted server: %v", err)
	}
}

func TestStartMainAndClose(t *testing.T) {
	if !Installed() {
		if Required() {
			t.Fatal("redis-server is not installed and REDIS_REQUIRED is set")
		}
		t.Skip("redis-server is not installed")
	}
	parent := t.TempDir()
	s, err := StartMain(parent)
	if err != nil {
		t.Fatal(err)
	}
	if err := ping(s.Addr); err != nil {
		t.Fatalf("started server: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := ping(s.Addr); err == nil {
		t.Fatal("closed server still answers")
	}
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Errorf("Close left %d files in the directory", len(left))
	}
}

// TestStartOnFreePortsTriesNewPortsWhenOneIsTaken: a port found free can be
// taken before redis-server binds it (a ./test run met a cluster node
// whose bus port had gone); the server then starts on other ports rather
// than failing the test.
func TestStartOnFreePortsTriesNewPortsWhenOneIsTaken(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	builds := 0
	s, err := startOnFreePorts(bin, func() (*Server, error) {
		builds++
		if builds == 1 {
			return newServerOn(t.TempDir(), taken.Addr().(*net.TCPAddr).Port), nil
		}
		return newServer(t.TempDir())
	})
	if err != nil {
		t.Fatalf("start with the first port taken: %v", err)
	}
	t.Cleanup(func() { s.Stop(t) })
	if builds != 2 || ping(s.Addr) != nil {
		t.Errorf("%d builds, PING %v; want a second build that answers", builds, ping(s.Addr))
	}
}

// TestRefuseWrites: while writes are refused a SET fails as out of memory
// and a GET still answers; after allow, the SET goes through.
func TestRefuseWrites(t *testing.T) {
	rdb := Start(t).NewClient(t)
	ctx := t.Context()
	allow := RefuseWrites(t, rdb)
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "OOM") {
		t.Fatalf("SET with writes refused: %v, want OOM", err)
	}
	if err := rdb.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET with writes refused: %v, want nil reply", err)
	}
	allow()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET after allow: %v", err)
	}
}
