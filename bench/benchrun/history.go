package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// historyVersion is the version of results.json as a history; version 1
// was one run alone, read as a history of that run.
const historyVersion = 2

// History is bench/results.json, committed with the code: every run of
// bench/run and of bench/run --growth, oldest first. The generated tables
// of docs/benchmarks.md show the newest of each, with each figure's change
// from the run before, so a regression shows as a change per figure.
type History struct {
	Version int            `json:"version"`
	Runs    []Report       `json:"runs"`
	Growth  []GrowthReport `json:"growth,omitempty"`
}

// latest returns the newest run and the one before it (nil when there is
// none).
func (h History) latest() (last, prev *Report) {
	n := len(h.Runs)
	if n > 0 {
		last = &h.Runs[n-1]
	}
	if n > 1 {
		prev = &h.Runs[n-2]
	}
	return last, prev
}

// latestGrowth is latest for the growth runs.
func (h History) latestGrowth() (last, prev *GrowthReport) {
	n := len(h.Growth)
	if n > 0 {
		last = &h.Growth[n-1]
	}
	if n > 1 {
		prev = &h.Growth[n-2]
	}
	return last, prev
}

// readHistory loads results.json; an empty history when there is none. A
// version 1 file (one run) becomes a history of that run.
func readHistory(path string) (History, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return History{Version: historyVersion}, nil
	}
	if err != nil {
		return History{}, fmt.Errorf("read results: %w", err)
	}
	var probe struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return History{}, fmt.Errorf("results %s: %w", path, err)
	}
	switch probe.Version {
	case reportVersion:
		var rep Report
		if err := json.Unmarshal(b, &rep); err != nil {
			return History{}, fmt.Errorf("results %s: %w", path, err)
		}
		return History{Version: historyVersion, Runs: []Report{rep}}, nil
	case historyVersion:
		var h History
		if err := json.Unmarshal(b, &h); err != nil {
			return History{}, fmt.Errorf("results %s: %w", path, err)
		}
		return h, nil
	}
	return History{}, fmt.Errorf("results %s: unknown version %d", path, probe.Version)
}

// writeHistory writes results.json.
func writeHistory(path string, h History) error {
	h.Version = historyVersion
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}
