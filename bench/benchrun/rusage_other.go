//go:build !unix

package main

import (
	"errors"
	"os"
	"time"
)

// processUsage needs a Unix rusage (peak resident memory); elsewhere the
// start-up figures are not measured.
func processUsage(*os.ProcessState) (time.Duration, int64, error) {
	return 0, 0, errors.New("start-up CPU time and peak memory need a Unix rusage")
}
