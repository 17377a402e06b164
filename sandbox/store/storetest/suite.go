// Package storetest is the conformance suite every store.Store must pass.
// Each implementation's tests call Run with a function that opens a fresh,
// empty store; the same behaviour is then checked against all of them (the
// in-memory store and the file-backed one).
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package storetest

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// Run runs the conformance suite. open is called once per subtest and must
// return a new, empty store; Run closes it when the subtest ends, so open
// must not.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, s store.Store)
	}{
		{"CreateGet", testCreateGet},
		{"NotFound", testNotFound},
		{"Invalid", testInvalid},
		{"Isolation", testIsolation},
		{"Conflict", testConflict},
		{"ConcurrentCreate", testConcurrentCreate},
		{"ListPaging", testListPaging},
		{"ListEmpty", testListEmpty},
		{"ListInsertBetweenPages", testListInsertBetweenPages},
		{"BadCursor", testBadCursor},
		{"AuditOnGet", testAuditOnGet},
		{"AuditOnList", testAuditOnList},
		{"AuditTrailBounded", testAuditTrailBounded},
		{"AuditTrailPaging", testAuditTrailPaging},
		{"AuditAppendOnly", testAuditAppendOnly},
		{"AuditInOrder", testAuditInOrder},
		{"Update", testUpdate},
		{"ConcurrentUpdate", testConcurrentUpdate},
		{"FindReferral", testFindReferral},
		{"LoadResetEmptyClients", testLoadResetEmptyClients},
		{"LoadAtomic", testLoadAtomic},
		{"ColonsInIDs", testColonsInIDs},
		{"RuntimeClients", testRuntimeClients},
		{"ResetClient", testResetClient},
		{"SubmissionKept", testSubmissionKept},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.run(t, s)
		})
	}
}
