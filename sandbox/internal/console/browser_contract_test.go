package console_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestConsoleShowsContractRecordAsStored: under a --contract, the data view
// shows a record by its submission as stored, and still offers its moves.
func TestConsoleShowsContractRecordAsStored(t *testing.T) {
	_, base := newSandbox(t, func(o *sandbox.Config) {
		o.ContractFile = filepath.Join("..", "..", "testdata", "contracts", "nested.yaml")
	})
	sent := `{"trialId":"NCT05550001","patient":{"identity":{"name":"Ada","birthDate":"1990-02-03","sex":"female"}}}`
	status, header, body := send(t, base, call{method: http.MethodPost, path: "/api/v1/referrals", token: token(t, base, "sandbox-partner"), contentType: "application/json", body: sent})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	location := header.Get("Location")
	outcomesID := location[len(location)-36:]

	ctx := newBrowser(t, desktopWidth, desktopHeight)
	openConsole(t, ctx, base, "data")
	row := fmt.Sprintf(`#referrals tr[data-outcomes-id=%s]`, jsString(outcomesID))
	waitFor(t, ctx, "the contract record", fmt.Sprintf(`!!document.querySelector(%s)`, jsString(row)))
	if got := eval[string](t, ctx, fmt.Sprintf(`document.querySelector(%s).textContent`, jsString(row+` code.submission`))); got != sent {
		t.Errorf("the record's patient cell shows %q, want the submission as sent %q", got, sent)
	}
	if moves := eval[string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll(%s)].map(b => b.dataset.move).join(',')`, jsString(row+` button[data-move]`))); moves != "reviewing,rejected,withdrawn" {
		t.Errorf("moves offered for the received record: %q", moves)
	}
	noStrayNull(t, ctx)
}
