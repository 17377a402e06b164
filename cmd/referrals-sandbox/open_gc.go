package main

import (
	"os"
	"runtime/debug"
)

// openGCPercent is the collector's GOGC while the sandbox opens a data
// file that holds records. Loading one allocates mostly what stays live
// (every record, its index entry), so at the default of 100 the collector
// runs cycle after cycle over a growing heap that holds little garbage,
// and a large file opens sooner with fewer cycles at hardly any cost in
// peak memory. Loading fixtures is the opposite case: decoding them
// leaves as much garbage as it keeps, so fewer cycles would raise the
// peak without a faster start, and a start that seeds from fixtures keeps
// the default.
const openGCPercent = 400

// collectLessWhileOpening raises GOGC to openGCPercent, when dataFile
// names a file that already holds records, until the returned function
// restores it. A GOGC the operator set (any value but the default, off
// included) is kept as it is, and GOMEMLIMIT, when set, bounds the heap
// whatever GOGC is.
func collectLessWhileOpening(dataFile string) (restore func()) {
	const defaultGCPercent = 100
	if dataFile == "" {
		return func() {}
	}
	if fi, err := os.Stat(dataFile); err != nil || fi.Size() == 0 {
		return func() {} // a new file, seeded from fixtures (or the open reports the error)
	}
	old := debug.SetGCPercent(openGCPercent)
	if old != defaultGCPercent {
		debug.SetGCPercent(old)
		return func() {}
	}
	return func() { debug.SetGCPercent(old) }
}
