package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// clusterMasters is how many masters the shared-mode cluster figures run
// on: the smallest Redis Cluster redis-cli creates.
const clusterMasters = 3

// redisCluster is a private Redis Cluster of the run, its masters on this
// machine (no replicas: the figures measure what slots and hash tags cost,
// not replication), each node with the single Redis's persistence.
type redisCluster struct {
	nodes []*redisServer
	// url is the sandbox's --redis-cluster URL: one seed, the others as
	// addr= parameters.
	url string
}

// startCluster starts clusterMasters cluster-enabled redis-servers under
// dir, joins them with redis-cli --cluster create, and waits (30 s at
// most) until every node reports the cluster ok.
func (ps *procs) startCluster(ctx context.Context, dir string) (*redisCluster, error) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, errors.New("redis-cli is not installed (apt-get install -y redis-tools), or pass --shared=false to skip the shared-mode figures")
	}
	c := &redisCluster{}
	var addrs []string
	for i := range clusterMasters {
		nodeDir := filepath.Join(dir, fmt.Sprintf("node-%d", i))
		if err := os.Mkdir(nodeDir, 0o700); err != nil {
			return nil, fmt.Errorf("cluster node directory: %w", err)
		}
		s, err := ps.startRedis(ctx, nodeDir, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000")
		if err != nil {
			c.close()
			return nil, fmt.Errorf("cluster node %d: %w", i, err)
		}
		c.nodes = append(c.nodes, s)
		addrs = append(addrs, s.addr)
	}
	create := exec.CommandContext(ctx, cli, append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...)
	if out, err := create.CombinedOutput(); err != nil {
		c.close()
		return nil, fmt.Errorf("redis-cli --cluster create: %w\n%s", err, out)
	}
	c.url = "redis://" + addrs[0] + "?addr=" + strings.Join(addrs[1:], "&addr=")
	deadline := time.Now().Add(30 * time.Second)
	for !c.ok(ctx) {
		if ctx.Err() != nil || time.Now().After(deadline) {
			c.close()
			return nil, fmt.Errorf("the cluster on %s was not ok within 30s", strings.Join(addrs, ", "))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return c, nil
}

// sandboxArgs points a sandbox at this cluster (--redis-cluster).
func (c *redisCluster) sandboxArgs() []string { return []string{"--redis-cluster", c.url} }

// ok reports whether every node reports cluster_state:ok.
func (c *redisCluster) ok(ctx context.Context) bool {
	for _, n := range c.nodes {
		info, err := n.client.ClusterInfo(ctx).Result()
		if err != nil || !strings.Contains(info, "cluster_state:ok") {
			return false
		}
	}
	return true
}

// commandsProcessed is the sum of the nodes' total_commands_processed (see
// redisServer.commandsProcessed).
func (c *redisCluster) commandsProcessed(ctx context.Context) (int64, error) {
	var total int64
	for _, n := range c.nodes {
		v, err := n.commandsProcessed(ctx)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total, nil
}

// close closes the clients; the processes end with the run's.
func (c *redisCluster) close() {
	for _, n := range c.nodes {
		n.close()
	}
}
