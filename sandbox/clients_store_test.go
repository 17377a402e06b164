package sandbox_test

import (
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/idp/clientstest"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// TestRecordStoreClients runs the client store conformance suite on the
// record store a sandbox that runs alone keeps its runtime clients in.
func TestRecordStoreClients(t *testing.T) {
	clientstest.Run(t, func(t *testing.T) idp.ClientStore {
		st, err := store.Open(store.MemoryPath)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return sandbox.RecordStoreClients(st)
	})
}
