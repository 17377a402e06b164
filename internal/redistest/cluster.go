package redistest

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a running Redis Cluster of private redis-server processes on
// loopback, each with AOF on, stopped when the test ends.
type Cluster struct {
	// Nodes are its servers: the first Masters are masters, the rest
	// their replicas, as `redis-cli --cluster create` assigned them.
	Nodes []*Server
	// Masters is how many of Nodes were created as masters.
	Masters int
	// URL is its --redis-cluster URL (every node a seed).
	URL string
	// replicas is how many replicas each master was created with.
	replicas int
}

// StartCluster runs a cluster of masters masters, each with replicas
// replicas, and waits until every slot is served. It skips t without
// redis-server or redis-cli, unless REDIS_REQUIRED is set.
func StartCluster(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err == nil {
		_, err = exec.LookPath("redis-cli")
	}
	if err != nil {
		if os.Getenv("REDIS_REQUIRED") != "" {
			t.Fatalf("redistest: redis-server or redis-cli is not installed and REDIS_REQUIRED is set: %v", err)
		}
		t.Skip("redistest: redis-server or redis-cli is not installed (apt-get install redis-server; .ci/run installs it)")
	}
	c := &Cluster{Masters: masters, replicas: replicas}
	var addrs []string
	for range masters * (1 + replicas) {
		s, err := startOnFreePorts(bin, func() (*Server, error) { return newClusterNode(t.TempDir()) })
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		t.Cleanup(func() { s.Stop(t) })
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	out, err := exec.Command("redis-cli", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	c.URL = "redis://" + addrs[0]
	for i, a := range addrs[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		c.URL += sep + "addr=" + a
	}
	c.WaitHealthy(t)
	return c
}

// newClusterNode prepares a cluster node keeping its files in dir, on a
// free port and a free cluster bus port. The bus port is chosen, not left
// to be the port plus 10000, which nothing checked was free.
func newClusterNode(dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	bus, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.URL = "redis://" + s.Addr
	s.args = []string{
		"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--cluster-port", strconv.Itoa(bus), "--dir", s.dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000",
		"--protected-mode", "yes", "--daemonize", "no", "--logfile", filepath.Join(s.dir, "redis.log"),
	}
	return s, nil
}

// WaitHealthy waits until every live node reports cluster_state:ok (every
// slot served) and every live master has as many replicas online as it was
// created with, live nodes permitting (after a start, a failover or a
// restart), so a WAIT for them can succeed.
func (c *Cluster) WaitHealthy(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok := true
		for _, s := range c.Nodes {
			if s.cmd == nil {
				continue
			}
			out, err := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", port(s.Addr), "cluster", "info").Output()
			if err != nil || !bytes.Contains(out, []byte("cluster_state:ok")) {
				ok = false
				break
			}
			if !c.replicasOnline(s) {
				ok = false
				break
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: the cluster did not become healthy within 30s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// replicasOnline reports whether s, if a master, has its replicas online
// (as many as the cluster was created with, or as live nodes allow).
func (c *Cluster) replicasOnline(s *Server) bool {
	out, err := exec.Command("redis-cli", "-p", port(s.Addr), "info", "replication").Output()
	if err != nil {
		return false
	}
	if !bytes.Contains(out, []byte("role:master")) {
		return true
	}
	live := 0
	for _, n := range c.Nodes {
		if n.cmd != nil {
			live++
		}
	}
	want := min(c.replicas, live-c.Masters)
	return bytes.Count(out, []byte("state=online")) >= want
}

// NewClient returns a cluster client of c, closed at t.Cleanup.
func (c *Cluster) NewClient(t testing.TB) *redis.ClusterClient {
	t.Helper()
	opts, err := redis.ParseClusterURL(c.URL)
	if err != nil {
		t.Fatalf("redistest: parse %s: %v", c.URL, err)
	}
	opts.ContextTimeoutEnabled = true
	rdb := redis.NewClusterClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// MasterOf is the node currently serving key as master.
func (c *Cluster) MasterOf(t testing.TB, key string) *Server {
	t.Helper()
	node, err := c.NewClient(t).MasterForKey(context.Background(), key)
	if err != nil {
		t.Fatalf("redistest: master of %s: %v", key, err)
	}
	for _, s := range c.Nodes {
		if s.Addr == node.Options().Addr {
			return s
		}
	}
	t.Fatalf("redistest: master of %s is %s, not one of the cluster's nodes", key, node.Options().Addr)
	return nil
}

// ReplicaOf is the live node replicating master.
func (c *Cluster) ReplicaOf(t testing.TB, master *Server) *Server {
	t.Helper()
	for _, s := range c.Nodes {
		if s == master || s.cmd == nil {
			continue
		}
		role := Role(s)
		if len(role) >= 3 && role[0] == "slave" && role[2] == port(master.Addr) {
			return s
		}
	}
	t.Fatalf("redistest: no live replica of master %s", master.Addr)
	return nil
}

// Role is ROLE as s answers it, one field a string (nil when s does not
// answer): "master" first for a master, "slave", host and port of its
// master for a replica.
func Role(s *Server) []string {
	out, err := exec.Command("redis-cli", "-p", port(s.Addr), "role").Output()
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}

// Kill stops s with SIGKILL, as a crash does.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited // start's goroutine waits for the process; a second Wait races it
	s.cmd = nil
}

// KeysPerMaster counts the keys each live master holds (DBSIZE), by
// address: how the keys spread over the shards.
func (c *Cluster) KeysPerMaster(t testing.TB) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, s := range c.Nodes {
		if s.cmd == nil {
			continue
		}
		role, err := exec.Command("redis-cli", "-p", port(s.Addr), "role").Output()
		if err != nil || !strings.HasPrefix(string(role), "master") {
			continue
		}
		n, err := exec.Command("redis-cli", "-p", port(s.Addr), "dbsize").Output()
		if err != nil {
			t.Fatalf("redistest: dbsize of %s: %v", s.Addr, err)
		}
		out[s.Addr], _ = strconv.ParseInt(strings.TrimSpace(string(n)), 10, 64)
	}
	return out
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// Prefixes gives a new hash-tagged key prefix at each call ("{name-1:}",
// "{name-2:}", ...), as the sandbox tags --redis-prefix on a cluster:
// conformance subtests each get their own, on one cluster.
func Prefixes(name string) func() string {
	n := 0
	return func() string {
		n++
		return "{" + name + "-" + strconv.Itoa(n) + ":}"
	}
}
