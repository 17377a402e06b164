// Package e2e holds black-box tests of the built referrals-sandbox binary:
// a soak under concurrent load with failures switched on and off, and
// durability across SIGKILL and SIGTERM. TestMain builds the binary once,
// as it is released, and every test runs it as a separate process on
// loopback, because only a real process can be killed, restarted on its
// data file, or drained by a signal.
//
//	go test ./e2e                          # everything, soak for 5 s
//	SOAK_DURATION=10m go test ./e2e -run Soak -v   # the long soak
//	E2E_SEED=42 go test ./e2e -run Kill    # replay the kill moments of a run
//	HOSTILE_FULL=1 go test ./e2e -run Hostile  # the 20,000 and 10,000 requests
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package e2e
