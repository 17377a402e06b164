package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// reopenReferrals is the size of the reopen test: thousands of records,
// several pages of every listing.
const reopenReferrals = 3000

// TestDataFileOfManyRecordsReopensIntact seeds a --data file with
// thousands of generated fixtures, changes a record, restarts on the file:
// every record reads as it did before the restart, change included; then
// a reset brings back the fixtures exactly as they read when seeded.
func TestDataFileOfManyRecordsReopensIntact(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "fixtures")
	gen := exec.CommandContext(t.Context(), sandboxBinary, "fixtures", "generate", "--seed", "11",
		"--referrals", strconv.Itoa(reopenReferrals), "--qualified", "200", "--out", big)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("fixtures generate: %v\n%s", err, out)
	}
	dataFile := filepath.Join(dir, "sandbox.db")
	client := newClient(2)
	sb := startSandbox(t, "--data", dataFile, "--fixtures", big, "--log-level", "warn")
	seeded := adminRecords(t, client, sb.base)
	var first referrals.Referral
	for _, raw := range seeded.referrals {
		if err := json.Unmarshal(raw, &first); err != nil {
			t.Fatal(err)
		}
		if first.Status == referrals.StatusReceived {
			break
		}
	}
	move := `{"status":"` + referrals.StatusReviewing + `"}`
	a, err := do(t.Context(), client, http.MethodPost, sb.base+"/__sandbox/referrals/"+first.TrialID+"/"+first.OutcomesID+"/status",
		"", "application/json", []byte(move), nil)
	if err != nil || a.status != http.StatusOK {
		t.Fatalf("move a referral: %v %d %s", err, a.status, a.body)
	}
	changed := adminRecords(t, client, sb.base)
	if changed.equal(seeded) {
		t.Fatal("the status move changed nothing: the test would prove nothing")
	}
	sb.signal(syscall.SIGTERM)
	if code := sb.waitExit(); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, sb.stderr)
	}

	sb = startSandbox(t, "--data", dataFile, "--fixtures", big, "--log-level", "warn")
	if got := adminRecords(t, client, sb.base); !got.equal(changed) {
		t.Errorf("after the restart: %d referrals and %d qualified, not byte for byte the %d and %d written",
			len(got.referrals), len(got.qualified), len(changed.referrals), len(changed.qualified))
	}
	postReset(t.Context(), t, client, sb.base)
	if got := adminRecords(t, client, sb.base); !got.equal(seeded) {
		t.Errorf("after a reset: %d referrals and %d qualified, not byte for byte the %d and %d fixtures",
			len(got.referrals), len(got.qualified), len(seeded.referrals), len(seeded.qualified))
	}
	sb.kill()
}

// records is partner 1's records as the admin data listings answer them,
// one raw JSON value each.
type records struct{ referrals, qualified []json.RawMessage }

func (r records) equal(o records) bool {
	same := func(a, b []json.RawMessage) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if !bytes.Equal(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return same(r.referrals, o.referrals) && same(r.qualified, o.qualified)
}

// adminRecords reads partner 1's records through the admin data listings,
// which, unlike the partner API's, add no audit entry to what they read.
func adminRecords(t *testing.T, c *http.Client, base string) records {
	t.Helper()
	query := "?clientId=" + url.QueryEscape(partners[0].id)
	return records{
		referrals: listAll[json.RawMessage](t, c, base+"/__sandbox/data/referrals"+query, "referrals", "", reopenReferrals),
		qualified: listAll[json.RawMessage](t, c, base+"/__sandbox/data/qualified"+query, "qualifiedReferrals", "", reopenReferrals),
	}
}

// TestCorruptDataFileIsRefused: a --data file that is not the store's
// (damaged, or some other file given by mistake) stops the start with
// status 1 and a message naming the file, and is left as it was.
func TestCorruptDataFileIsRefused(t *testing.T) {
	dataFile := filepath.Join(t.TempDir(), "sandbox.db")
	content := []byte("*3\r\n$3\r\nset\r\n$5\r\nr:a:b\r\n$2\r\n{}\r\nthis line is not a command of the store\r\n")
	if err := os.WriteFile(dataFile, content, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), healthWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, sandboxBinary, "--addr", "127.0.0.1:0", "--data", dataFile)
	var stderr testutil.LockedBuffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("sandbox on a corrupt data file: %v, want exit status 1; stderr:\n%s", err, &stderr)
	}
	if msg := stderr.String(); !strings.Contains(msg, "data file "+dataFile) || !strings.Contains(msg, "invalid") {
		t.Errorf("the refusal does not name the file and say it is invalid:\n%s", msg)
	}
	if after, err := os.ReadFile(dataFile); err != nil || !bytes.Equal(after, content) {
		t.Errorf("the refused file was changed (%v):\n%q\nwant:\n%q", err, after, content)
	}
}
