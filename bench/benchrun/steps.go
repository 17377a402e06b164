package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// step is one measurement of a run, by the name --only picks it with.
type step struct {
	name string
	// wrk: the step loads the sandbox with wrk, which must be installed.
	wrk     bool
	measure func(context.Context)
}

// steps are a run's measurements in the order they run: the quiet ones
// first, while nothing else of ours runs.
func (r *runner) steps() []step {
	return []step{
		{name: "allocs", measure: r.measureAllocs},
		{name: "cold-start", measure: r.measureColdStart},
		{name: "startup", measure: r.measureStartup},
		{name: "endpoints", wrk: true, measure: r.measureEndpoints},
		{name: "listing", wrk: true, measure: r.measureListing},
	}
}

// stepNames are the names --only takes.
func stepNames() []string {
	var names []string
	for _, s := range new(runner).steps() {
		names = append(names, s.name)
	}
	return names
}

// parseSteps reads --only: step names separated by commas; nil for "".
func parseSteps(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(stepNames(), name) {
			return nil, fmt.Errorf("--only: no step %q (steps: %s)", name, strings.Join(stepNames(), ", "))
		}
		out = append(out, name)
	}
	return out, nil
}

// selectedSteps are the steps this run measures: every one, or those of
// --only.
func (r *runner) selectedSteps() []step {
	all := r.steps()
	if len(r.cfg.only) == 0 {
		return all
	}
	var out []step
	for _, s := range all {
		if slices.Contains(r.cfg.only, s.name) {
			out = append(out, s)
		}
	}
	return out
}

// needsWrk reports whether a selected step loads the sandbox with wrk.
func (r *runner) needsWrk() bool {
	return slices.ContainsFunc(r.selectedSteps(), func(s step) bool { return s.wrk })
}
