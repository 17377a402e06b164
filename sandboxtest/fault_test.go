package sandboxtest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandboxtest"
)

// TestEveryFaultConstantIsOneTheSandboxKnows: the sandbox takes a rule with
// each Fault constant and holds it with that fault, and refuses a fault it
// does not know, listing the ones it does: the constants and the sandbox
// agree.
func TestEveryFaultConstantIsOneTheSandboxKnows(t *testing.T) {
	sb := sandboxtest.Start(t)
	faults := []sandboxtest.Fault{
		sandboxtest.FaultReset, sandboxtest.FaultEmpty, sandboxtest.FaultHang,
		sandboxtest.FaultMalformed, sandboxtest.FaultDropAfterCommit,
	}
	for _, fault := range faults {
		added := sb.AddRule(t, sandboxtest.Rule{ClientID: "nobody-sends-this", Endpoint: sandboxtest.EndpointAPI, Fault: fault})
		if added.Fault != fault {
			t.Errorf("rule added with fault %q holds %q", fault, added.Fault)
		}
	}
	_, err := sb.AddRuleContext(t.Context(), sandboxtest.Rule{Endpoint: sandboxtest.EndpointAPI, Fault: "explode"})
	if err == nil {
		t.Fatal("the sandbox took the fault \"explode\"")
	}
	for _, fault := range faults {
		if !strings.Contains(err.Error(), string(fault)) {
			t.Errorf("refusal %q does not list the fault %q", err, fault)
		}
	}
}

// TestFaultsBreakTheConnection: a rule's fault reaches the client as a
// broken connection (or, malformed, as JSON no decoder takes) and the
// journal names it. Hang is left out: showing it needs a client that gives
// up after a while.
func TestFaultsBreakTheConnection(t *testing.T) {
	sb := sandboxtest.Start(t)
	tests := []struct {
		fault sandboxtest.Fault
		// malformed answers; the others leave the client with an error.
		answers bool
	}{
		{sandboxtest.FaultReset, false},
		{sandboxtest.FaultEmpty, false},
		{sandboxtest.FaultMalformed, true},
		{sandboxtest.FaultDropAfterCommit, false},
	}
	for _, tc := range tests {
		t.Run(string(tc.fault), func(t *testing.T) {
			creds := sb.NewClient(t)
			token := sb.Token(t, creds)
			sb.AddRule(t, sandboxtest.Rule{ClientID: creds.ClientID, Endpoint: sandboxtest.EndpointAPI, Fault: tc.fault, Times: 1})

			// A connection of its own: on a reused one, Go's transport
			// would quietly retry the GET after a reset or an EOF.
			transport := sb.Client().Transport.(*http.Transport).Clone()
			transport.DisableKeepAlives = true
			defer transport.CloseIdleConnections()
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, sb.RootURL+trialsPath, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := (&http.Client{Transport: transport}).Do(req)
			switch {
			case !tc.answers && err == nil:
				resp.Body.Close()
				t.Fatalf("the client got an answer, %s, through a %s fault", resp.Status, tc.fault)
			case tc.answers && err != nil:
				t.Fatalf("the client got no answer through a %s fault: %v", tc.fault, err)
			case tc.answers:
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || json.Valid(body) {
					t.Errorf("answer through a %s fault: %s %q, want a 200 with broken JSON", tc.fault, resp.Status, body)
				}
			}

			// The sandbox journals the call once the connection is gone,
			// which may be after the client has seen it go.
			testutil.Eventually(t, 10*time.Second, func() error {
				entries, err := sb.RequestsContext(t.Context(), sandboxtest.JournalFilter{ClientID: creds.ClientID, Path: trialsPath})
				if err != nil || len(entries) != 1 || entries[0].Fault != tc.fault {
					return fmt.Errorf("journal of the faulted call: %+v (%v), want one entry with fault %q", entries, err, tc.fault)
				}
				return nil
			})
		})
	}
}
