package sandbox_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redistest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
)

// TestRedisClusterNATMap: with --redis-cluster-nat-map naming a proxy for
// every node, the sandbox reaches the cluster through the proxies: its
// scripts pass through them, not straight to the addresses the nodes
// announce. A cluster in containers announces addresses only its own
// network reaches; this is how a replica outside reaches it.
func TestRedisClusterNATMap(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	var natMap []string
	var proxies []*redistest.FaultProxy
	for _, node := range cluster.Nodes {
		p := redistest.NewFaultProxy(t, node)
		proxies = append(proxies, p)
		natMap = append(natMap, node.Addr+"="+p.Addr)
	}
	s := openSandbox(t, sandbox.Config{Redis: backend.RedisConfig{ClusterURL: cluster.URL, NATMap: natMap, Timeout: 2 * time.Second}})
	if r := s.do(request{path: trialsPath, token: s.token(partner)}); r.Status != http.StatusOK {
		t.Fatalf("trials through the mapped cluster: %d %s", r.Status, r.Body)
	}
	scripts := 0
	for _, p := range proxies {
		for _, cmd := range p.Seen() {
			if strings.HasPrefix(strings.ToUpper(cmd), "EVAL") {
				scripts++
			}
		}
	}
	if scripts == 0 {
		t.Error("no script passed through the proxies the NAT map names: the sandbox went to the announced addresses")
	}
}

// TestRedisClusterNATMapRefusesMalformedEntries: an entry that is not
// ANNOUNCED=REACHABLE host:port pairs is refused at start, naming it.
func TestRedisClusterNATMapRefusesMalformedEntries(t *testing.T) {
	for _, entries := range [][]string{{"127.0.0.1:7000"}, {"127.0.0.1:7000=nowhere"}, {"a:1=b:2", "a:1=c:3"}} {
		if _, err := backend.ParseRedisNATMap(entries); err == nil || !strings.Contains(err.Error(), "--redis-cluster-nat-map") {
			t.Errorf("ParseRedisNATMap(%q): %v; want an error naming the flag", entries, err)
		}
	}
	if m, err := backend.ParseRedisNATMap([]string{"10.0.0.5:6379=127.0.0.1:7001"}); err != nil || m["10.0.0.5:6379"] != "127.0.0.1:7001" {
		t.Errorf("a good entry: %v %v", m, err)
	}
}
