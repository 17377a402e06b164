package main

import (
	"bytes"
	"strings"
	"testing"
)

// infoStatsSample is the start of Redis 7's INFO stats answer (CRLF line
// ends, as the server sends them).
const infoStatsSample = "# Stats\r\ntotal_connections_received:12\r\n" +
	"total_commands_processed:184467\r\ninstantaneous_ops_per_sec:9021\r\n" +
	"total_net_input_bytes:1048576\r\n"

func TestParseInfoField(t *testing.T) {
	got, err := parseInfoField(strings.NewReader(infoStatsSample), "total_commands_processed")
	if err != nil || got != 184467 {
		t.Errorf("total_commands_processed = %d, %v; want 184467", got, err)
	}
	if _, err := parseInfoField(strings.NewReader(infoStatsSample), "total_commands"); err == nil {
		t.Error("a field that is only a prefix of a line was found")
	}
	if _, err := parseInfoField(strings.NewReader("total_commands_processed:many\r\n"), "total_commands_processed"); err == nil {
		t.Error("a non-numeric value was accepted")
	}
}

func TestSharedModeFigures(t *testing.T) {
	rs := results{}
	rs.set(keyTrials, []float64{40000}, nil)
	rs.set(keyTrialsRedis, []float64{18000}, nil) // 45%: missed
	rs.get(keyTrialsRedis).RedisCommandsPerReq = 2
	rs.set(keyQualified, []float64{8000}, nil)
	rs.set(keyQualRedis, []float64{2000}, nil) // no target, only a ratio
	rs.get(keyQualRedis).RedisCommandsPerReq = 4.25
	byKey := map[string]Result{}
	for _, r := range evaluate(rs) {
		byKey[r.Key] = r
	}
	trials := byKey[keyTrialsRedis]
	if trials.Base != keyTrials || trials.Ratio != 0.45 || trials.Met == nil || *trials.Met {
		t.Errorf("shared trials = base %q ratio %v met %v; want base trials, 0.45, missed", trials.Base, trials.Ratio, trials.Met)
	}
	qual := byKey[keyQualRedis]
	if qual.Base != keyQualified || qual.Ratio != 0.25 || qual.Met != nil {
		t.Errorf("shared qualified = base %q ratio %v met %v; want base qualified, 0.25, no verdict", qual.Base, qual.Ratio, qual.Met)
	}
	var out bytes.Buffer
	if err := writeTable(&out, Report{Results: evaluate(rs)}, nil); err != nil {
		t.Fatal(err)
	}
	table := out.String()
	for _, want := range []string{"45% of trials", "MISSED", "25% of qualified",
		"--redis: 2.00 Redis commands per request", "--redis: 4.25 Redis commands per request"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// TestClusterFigures: the cluster rows are judged against the single
// Redis's, with no verdict of their own, and name their commands per
// request.
func TestClusterFigures(t *testing.T) {
	rs := results{}
	rs.set(keyTrialsRedis, []float64{10000}, nil)
	rs.set(keyTrialsCluster, []float64{9000}, nil)
	rs.get(keyTrialsCluster).RedisCommandsPerReq = 3
	byKey := map[string]Result{}
	for _, r := range evaluate(rs) {
		byKey[r.Key] = r
	}
	if c := byKey[keyTrialsCluster]; c.Base != keyTrialsRedis || c.Ratio != 0.9 || c.Met != nil {
		t.Errorf("cluster trials = base %q ratio %v met %v; want base trials_redis, 0.9, no verdict", c.Base, c.Ratio, c.Met)
	}
	var out bytes.Buffer
	if err := writeTable(&out, Report{Results: evaluate(rs)}, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"90% of trials_redis", "--redis-cluster (3 masters): 3.00 Redis commands per request"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
