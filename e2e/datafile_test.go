package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// TestSecondSandboxOnTheSameDataFileExits starts a sandbox on a --data
// file, then a second one on the same file: the second exits at once with
// status 1 and a message naming the file, its lock file and the first
// process, and the first keeps serving.
func TestSecondSandboxOnTheSameDataFileExits(t *testing.T) {
	dataFile := filepath.Join(t.TempDir(), "sandbox.db")
	first := startSandbox(t, "--data", dataFile)

	ctx, cancel := context.WithTimeout(t.Context(), healthWait)
	defer cancel()
	second := exec.CommandContext(ctx, sandboxBinary, "--addr", "127.0.0.1:0", "--data", dataFile)
	var stderr testutil.LockedBuffer
	second.Stdout, second.Stderr = io.Discard, &stderr
	err := second.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("second sandbox on the same file: %v, want exit status 1; stderr:\n%s", err, &stderr)
	}
	msg := stderr.String()
	for _, want := range []string{dataFile + ": in use by another process", dataFile + ".lock", "process " + strconv.Itoa(first.cmd.Process.Pid)} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, msg)
		}
	}
	if err := first.waitHealthy(); err != nil {
		t.Errorf("the first sandbox after the refused second: %v", err)
	}
}

// TestTornTailIsLoggedAtStart appends the start of a write that never
// finished to a --data file, as a crash mid-write leaves it: the next start
// serves every complete record and logs, as a warning naming the file, how
// many bytes it cut.
func TestTornTailIsLoggedAtStart(t *testing.T) {
	dataFile := filepath.Join(t.TempDir(), "sandbox.db")
	sb := startSandbox(t, "--data", dataFile)
	sb.signal(syscall.SIGTERM)
	if code := sb.waitExit(); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, sb.stderr)
	}
	key := "r:torn:sandbox-partner"
	torn := fmt.Sprintf("*3\r\n$3\r\nset\r\n$%d\r\n%s\r\n$200\r\n{\"trialId\":", len(key), key)
	f, err := os.OpenFile(dataFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(torn); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	sb = startSandbox(t, "--data", dataFile)
	client := newClient(1)
	token := mustToken(t, client, sb.base, partners[0].id, partners[0].secret)
	if n := len(listAllReferrals(t, client, sb.base, token, 100)); n != defaultReferrals {
		t.Errorf("after the torn tail was cut: %d referrals, want the %d complete ones", n, defaultReferrals)
	}
	var warning map[string]any
	for _, line := range strings.Split(sb.stderr.String(), "\n") {
		if strings.Contains(line, "last write was incomplete") {
			if err := json.Unmarshal([]byte(line), &warning); err != nil {
				t.Fatal(err)
			}
		}
	}
	if warning["level"] != "WARN" || warning["file"] != dataFile || warning["bytes_dropped"] != float64(len(torn)) {
		t.Errorf("start-up log entry about the torn tail: %v; want a WARN naming %s and %d bytes dropped\n%s", warning, dataFile, len(torn), sb.stderr)
	}
}

// TestDamagedDataFileStopsStart damages a length in the middle of a
// --data file into more bytes than the file holds, which buntdb would take
// for a torn tail and cut, with every record after it: the sandbox exits
// at once with status 1 and a message naming the file, the byte where it
// is damaged and how much would be lost, and the file is left as it was.
func TestDamagedDataFileStopsStart(t *testing.T) {
	dataFile := filepath.Join(t.TempDir(), "sandbox.db")
	sb := startSandbox(t, "--data", dataFile)
	sb.signal(syscall.SIGTERM)
	if code := sb.waitExit(); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, sb.stderr)
	}
	data, err := os.ReadFile(dataFile)
	if err != nil {
		t.Fatal(err)
	}
	// A write in the middle: "*3\r\n$3\r\nset\r\n", the key's length and
	// the key, then the value's length, which is damaged.
	set := []byte("*3\r\n$3\r\nset\r\n")
	var writes []int
	for at := 0; ; {
		i := bytes.Index(data[at:], set)
		if i < 0 {
			break
		}
		writes = append(writes, at+i)
		at += i + len(set)
	}
	if len(writes) < 3 {
		t.Fatalf("the data file holds %d writes; the test needs a few", len(writes))
	}
	start := writes[len(writes)/2]
	key := start + len(set)
	keyLen, err := strconv.Atoi(string(data[key+1 : key+bytes.Index(data[key:], []byte("\r\n"))]))
	if err != nil {
		t.Fatal(err)
	}
	value := key + bytes.Index(data[key:], []byte("\r\n")) + 2 + keyLen + 2
	valueEnd := value + bytes.Index(data[value:], []byte("\r\n"))
	damaged := bytes.Join([][]byte{data[:value], []byte("$" + strconv.Itoa(len(data))), data[valueEnd:]}, nil)
	if err := os.WriteFile(dataFile, damaged, 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), healthWait)
	defer cancel()
	second := exec.CommandContext(ctx, sandboxBinary, "--addr", "127.0.0.1:0", "--data", dataFile)
	var stderr testutil.LockedBuffer
	second.Stdout, second.Stderr = io.Discard, &stderr
	err = second.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("sandbox on a damaged data file: %v, want exit status 1; stderr:\n%s", err, &stderr)
	}
	msg := stderr.String()
	for _, want := range []string{dataFile, fmt.Sprintf("damaged at byte %d", start),
		fmt.Sprintf("lose the %d bytes", len(damaged)-start), "left untouched", "backup"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, msg)
		}
	}
	if got, err := os.ReadFile(dataFile); err != nil || !bytes.Equal(got, damaged) {
		t.Errorf("the refused data file changed (%v): %d bytes, were %d", err, len(got), len(damaged))
	}
}

// Sizes of the reset test: large enough that writing the new records takes
// a good part of a second, so that the kills land while the reset runs.
const (
	resetReferrals = 20000
	resetQualified = 20000
	// The embedded fixtures' records of sandbox-partner: the old state.
	defaultReferrals = 8
	defaultQualified = 4
)

// TestKillDuringResetLeavesOldOrNewData puts a --data file in a known old
// state (the embedded fixtures), starts the sandbox on it with large
// generated fixtures, and kills it with SIGKILL during
// POST /__sandbox/reset. The kills are placed by watching the files: once
// the new content being written (wherever the sandbox writes it: appended
// to the data file or beside it) has reached a quarter, a half and three
// quarters of its final size, and once the data file holds all of it.
// After each kill the sandbox restarts on the file, and partner 1 must see
// the old records exactly or the new ones exactly, never a mix.
func TestKillDuringResetLeavesOldOrNewData(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "fixtures")
	gen := exec.CommandContext(t.Context(), sandboxBinary, "fixtures", "generate", "--seed", "7",
		"--referrals", strconv.Itoa(resetReferrals), "--qualified", strconv.Itoa(resetQualified), "--out", big)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("fixtures generate: %v\n%s", err, out)
	}
	oldFile := filepath.Join(dir, "old.db")
	sb := startSandbox(t, "--data", oldFile)
	sb.signal(syscall.SIGTERM)
	if code := sb.waitExit(); code != 0 {
		t.Fatalf("seeding the old state: exit %d\n%s", code, sb.stderr)
	}
	oldSize := fileSize(oldFile)

	client := newClient(2)
	dataFile := filepath.Join(dir, "sandbox.db")
	// One whole reset, to learn the size of the new content.
	copyFile(t, oldFile, dataFile)
	sb = startSandbox(t, "--data", dataFile, "--fixtures", big, "--log-level", "warn")
	postReset(t.Context(), t, client, sb.base)
	sb.kill()
	newSize := fileSize(dataFile)

	written := func() int64 {
		// Appended to the data file, or built in any file beside it.
		n := fileSize(dataFile) - oldSize
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if p := filepath.Join(dir, e.Name()); strings.HasPrefix(e.Name(), "sandbox.db.") {
				n = max(n, fileSize(p))
			}
		}
		return n
	}
	triggers := map[string]func() bool{
		"new content 1/4 written": func() bool { return written() >= newSize/4 },
		"new content 1/2 written": func() bool { return written() >= newSize/2 },
		"new content 3/4 written": func() bool { return written() >= newSize*3/4 },
		"data file complete":      func() bool { return fileSize(dataFile) >= newSize },
	}
	outcomes := map[string]string{}
	for name, trigger := range triggers {
		copyFile(t, oldFile, dataFile)
		sb := startSandbox(t, "--data", dataFile, "--fixtures", big, "--log-level", "warn")
		answered := make(chan struct{})
		go func() {
			defer close(answered)
			// The answer seldom comes: the process is killed first. Only
			// the file's state matters.
			_, _ = do(t.Context(), client, http.MethodPost, sb.base+"/__sandbox/reset", "", "application/json", []byte("{}"), nil)
		}()
		killWhen(sb, trigger, answered)
		<-answered

		sb = startSandbox(t, "--data", dataFile, "--fixtures", big, "--log-level", "warn")
		referrals, qualified := countRecords(t, client, sb.base, partners[0].id)
		sb.kill()
		switch {
		case referrals == defaultReferrals && qualified == defaultQualified:
			outcomes[name] = "old"
		case referrals == resetReferrals && qualified == resetQualified:
			outcomes[name] = "new"
		default:
			t.Errorf("killed when %s: %d referrals and %d qualified referrals, neither the old %d+%d nor the new %d+%d",
				name, referrals, qualified, defaultReferrals, defaultQualified, resetReferrals, resetQualified)
		}
	}
	t.Logf("state after each kill: %v", outcomes)
}

// countRecords counts the client's referrals and qualified referrals
// through the admin data listing, which, unlike the partner API's, adds no
// audit entry to every qualified referral it reads.
func countRecords(t *testing.T, c *http.Client, base, clientID string) (refs, qualified int) {
	t.Helper()
	query := "?clientId=" + url.QueryEscape(clientID)
	refs = len(listAll[referrals.Referral](t, c, base+"/__sandbox/data/referrals"+query, "referrals", "", resetReferrals))
	qualified = len(listAll[referrals.QualifiedReferral](t, c, base+"/__sandbox/data/qualified"+query, "qualifiedReferrals", "", resetQualified))
	return refs, qualified
}

// killWhen polls trigger and kills the process as soon as it holds, or
// once the request it watches has been answered. It polls every 100 µs:
// often enough to land inside a write of megabytes, without spinning a
// core the sandbox needs.
func killWhen(sb *sandboxProc, trigger func() bool, answered <-chan struct{}) {
	defer sb.kill()
	for !trigger() {
		select {
		case <-answered:
			return
		case <-time.After(100 * time.Microsecond):
		}
	}
}

// fileSize is the size of the file at path, 0 if there is none.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// postReset resets the sandbox and waits for the answer.
func postReset(ctx context.Context, t *testing.T, c *http.Client, base string) {
	t.Helper()
	a, err := do(ctx, c, http.MethodPost, base+"/__sandbox/reset", "", "application/json", []byte("{}"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.status != http.StatusOK {
		t.Fatalf("reset: status %d: %s", a.status, a.body)
	}
}

// copyFile copies src over dst, as a fresh copy of a saved state.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(fmt.Errorf("restore %s: %w", dst, err))
	}
}
