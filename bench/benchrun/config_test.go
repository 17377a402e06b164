package main

import (
	"io"
	"reflect"
	"slices"
	"testing"
	"time"
)

var defaultSizes = []int{100, 10000, 100000, 1000000}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    config
		wantErr bool
	}{
		{name: "defaults", args: nil, want: config{rounds: 3, duration: 5 * time.Second, warmup: time.Second,
			threads: 2, connections: 50, coldStarts: 20, startups: 15, listSize: 100000, out: "bench/results.json", docs: "docs/benchmarks.md", growthSizes: defaultSizes, growthTimeout: 5 * time.Minute, shared: true}},
		{name: "quick", args: []string{"--quick", "--rounds", "7"}, want: config{rounds: 1, duration: 2 * time.Second,
			threads: 2, connections: 50, coldStarts: 20, startups: 15, listSize: 100000, out: "bench/results.json", docs: "docs/benchmarks.md", growthSizes: defaultSizes, growthTimeout: 5 * time.Minute, quick: true, shared: true}},
		{name: "no shared mode", args: []string{"--shared=false"}, want: config{rounds: 3, duration: 5 * time.Second, warmup: time.Second,
			threads: 2, connections: 50, coldStarts: 20, startups: 15, listSize: 100000, out: "bench/results.json", docs: "docs/benchmarks.md", growthSizes: defaultSizes, growthTimeout: 5 * time.Minute}},
		{name: "growth", args: []string{"--growth", "--growth-sizes", "100, 2000", "--growth-timeout", "90s"}, want: config{rounds: 3, duration: 5 * time.Second, warmup: time.Second,
			threads: 2, connections: 50, coldStarts: 20, startups: 15, listSize: 100000, out: "bench/results.json", docs: "docs/benchmarks.md", shared: true,
			growth: true, growthSizes: []int{100, 2000}, growthTimeout: 90 * time.Second}},
		{name: "start-up alone", args: []string{"--only", "startup", "--startups", "5", "--bin", "/tmp/old"}, want: config{rounds: 3, duration: 5 * time.Second, warmup: time.Second,
			threads: 2, connections: 50, coldStarts: 20, startups: 5, listSize: 100000, out: "bench/results.json", docs: "docs/benchmarks.md", growthSizes: defaultSizes, growthTimeout: 5 * time.Minute, shared: true,
			only: []string{"startup"}, bin: "/tmp/old"}},
		{name: "two steps", args: []string{"--only", "startup, cold-start"}, want: config{rounds: 3, duration: 5 * time.Second, warmup: time.Second,
			threads: 2, connections: 50, coldStarts: 20, startups: 15, listSize: 100000, out: "bench/results.json", docs: "docs/benchmarks.md", growthSizes: defaultSizes, growthTimeout: 5 * time.Minute, shared: true,
			only: []string{"startup", "cold-start"}}},
		{name: "no such step", args: []string{"--only", "startup,warp"}, wantErr: true},
		{name: "a binary of another commit recorded as this one's", args: []string{"--bin", "/tmp/old"}, wantErr: true},
		{name: "only with growth", args: []string{"--only", "startup", "--growth"}, wantErr: true},
		{name: "zero starts", args: []string{"--startups", "0"}, wantErr: true},
		{name: "growth size not a count", args: []string{"--growth-sizes", "100,lots"}, wantErr: true},
		{name: "growth size zero", args: []string{"--growth-sizes", "0"}, wantErr: true},
		{name: "zero rounds", args: []string{"--rounds", "0"}, wantErr: true},
		{name: "sub-second duration", args: []string{"--duration", "500ms"}, wantErr: true},
		{name: "fewer connections than threads", args: []string{"--threads", "4", "--connections", "2"}, wantErr: true},
		{name: "stray argument", args: []string{"now"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseFlags(%v) error = %v, want error %v", tt.args, err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseFlags(%v) = %+v, want %+v", tt.args, got, tt.want)
			}
		})
	}
}

func TestWrkArgs(t *testing.T) {
	s := wrkSettings{threads: 2, connections: 50}
	j := wrkJob{url: "http://127.0.0.1:1/x", headers: []string{"Authorization: Bearer t"}, script: "/tmp/q.lua", scriptArgs: []string{"r1"}}
	got := s.args(j, 5*time.Second)
	want := []string{"-t2", "-c50", "-d5s", "--latency", "--timeout", "5s",
		"-H", "Authorization: Bearer t", "-s", "/tmp/q.lua", "http://127.0.0.1:1/x", "--", "r1"}
	if !slices.Equal(got, want) {
		t.Errorf("args = %q\nwant %q", got, want)
	}
}

func TestLuaScriptsAreEmbedded(t *testing.T) {
	for _, name := range []string{"token.lua", "qualified.lua"} {
		b, err := luaScripts.ReadFile("lua/" + name)
		if err != nil || len(b) == 0 {
			t.Errorf("lua/%s: %v", name, err)
		}
	}
}
