package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// damageRecords is how many referrals the damage tests write: the
// command of each is about 200 bytes, so that a hundreds digit turned
// into a 9 runs past the end of the file from any of them.
const damageRecords = 4

// writeDamageFile writes damageRecords referrals of alice to
// a new data file and returns its path, its bytes and what the store
// answers from it.
func writeDamageFile(t *testing.T) (path string, data []byte, want string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "data.db")
	s := mustOpen(t, path)
	for i := 1; i <= damageRecords; i++ {
		noErr(t, s.CreateReferral(context.Background(), referral("alice", "R-"+strconv.Itoa(i), "2025-10-13T09:00:0"+strconv.Itoa(i)+"Z")))
	}
	want = dump(t, s)
	noErr(t, s.Close())
	data, err := os.ReadFile(path)
	noErr(t, err)
	return path, data, want
}

// commandOf is the offset of the command that sets key in data, and the
// offset of its value's length header ("$163\r\n").
func commandOf(t *testing.T, data []byte, key string) (start, valueHeader int) {
	t.Helper()
	head := fmt.Sprintf("*3\r\n$3\r\nset\r\n$%d\r\n%s\r\n", len(key), key)
	start = bytes.Index(data, []byte(head))
	if start < 0 {
		t.Fatalf("no command sets %s in the data file", key)
	}
	return start, start + len(head)
}

// TestFileDamageMidFileRefused: a length in the middle of the data file
// damaged into more bytes than the file holds made buntdb cut the file
// there, losing every later record, and open as if a torn tail had been
// cut. Open refuses it instead, naming the file, the offset, the bytes it
// would lose and what the operator can do, and leaves the file's bytes as
// they were; cutting out the damaged write as the error says opens the
// file with every other record.
func TestFileDamageMidFileRefused(t *testing.T) {
	path, data, _ := writeDamageFile(t)
	start, header := commandOf(t, data, "r:R-2:alice")
	next, _ := commandOf(t, data, "r:R-3:alice")
	end := header + bytes.Index(data[header:], []byte("\r\n"))
	damaged := bytes.Join([][]byte{data[:header], []byte("$" + strconv.Itoa(len(data))), data[end:]}, nil)
	noErr(t, os.WriteFile(path, damaged, 0o600))

	for attempt := range 2 { // the refusal leaves the file, and its lock, as they were
		s, err := store.Open(path)
		if err == nil {
			clients := dump(t, s)
			_ = s.Close()
			t.Fatalf("a data file damaged mid-file opened; it now answers:\n%s", clients)
		}
		msg := err.Error()
		lost := len(damaged) - start
		for _, want := range []string{path, fmt.Sprintf("at byte %d", start), fmt.Sprintf("lose the %d bytes", lost),
			"left untouched", "restore it from a backup", fmt.Sprintf("bytes %d to %d", start, next+len(damaged)-len(data)-1)} {
			if !strings.Contains(msg, want) {
				t.Errorf("open %d: the refusal does not say %q: %v", attempt, want, err)
			}
		}
		if !errors.Is(err, store.ErrDamaged) {
			t.Errorf("open %d: %v, want ErrDamaged", attempt, err)
		}
		got, rerr := os.ReadFile(path)
		noErr(t, rerr)
		if !bytes.Equal(got, damaged) {
			t.Fatalf("open %d: the refused file changed: %d bytes, were %d", attempt, len(got), len(damaged))
		}
	}

	// The operator's way out that loses only the damaged write.
	shift := len(damaged) - len(data)
	noErr(t, os.WriteFile(path, append(damaged[:start:start], damaged[next+shift:]...), 0o600))
	s := mustOpen(t, path)
	defer s.Close()
	for i := 1; i <= damageRecords; i++ {
		_, err := s.GetReferral(context.Background(), "alice", "R-"+strconv.Itoa(i))
		if wantGone := i == 2; wantGone != errors.Is(err, store.ErrNotFound) || (!wantGone && err != nil) {
			t.Errorf("R-%d after cutting out the damaged write: %v", i, err)
		}
	}
}

// TestFileTornTailOfEveryLengthOpens cuts the data file inside its last
// write, at every byte, as a crash mid-write leaves it (a record's value
// holds a newline, which the check for later writes must not take for
// one): every such file opens without the torn write, with the earlier
// records, and logs the bytes it cut.
func TestFileTornTailOfEveryLengthOpens(t *testing.T) {
	_, data, _ := writeDamageFile(t)
	last, _ := commandOf(t, data, "r:R-4:alice")
	for cut := last + 1; cut < len(data); cut++ {
		path := filepath.Join(t.TempDir(), "data.db")
		noErr(t, os.WriteFile(path, data[:cut], 0o600))
		var logs bytes.Buffer
		s, err := store.Open(path, store.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		if err != nil {
			t.Errorf("cut at byte %d of the last write: %v", cut-last, err)
			continue
		}
		for i := 1; i <= damageRecords; i++ {
			_, err := s.GetReferral(context.Background(), "alice", "R-"+strconv.Itoa(i))
			if wantGone := i == damageRecords; wantGone != errors.Is(err, store.ErrNotFound) || (!wantGone && err != nil) {
				t.Errorf("cut at byte %d of the last write: R-%d: %v", cut-last, i, err)
			}
		}
		noErr(t, s.Close())
		if log := logs.String(); !strings.Contains(log, "last write was incomplete") || !strings.Contains(log, "bytes_dropped="+strconv.Itoa(cut-last)) {
			t.Errorf("cut at byte %d of the last write: the log does not report the bytes cut:\n%s", cut-last, log)
		}
		if size := fileSize(t, path); size != int64(last) {
			t.Errorf("cut at byte %d of the last write: %d bytes after opening, want the %d of the whole writes", cut-last, size, last)
		}
	}
}

// TestFileDamageNeverLosesRecordsSilently damages, one at a time, every
// byte of the framing of a write at the start and one near the end of the
// file (its count, lengths and line ends: each digit into every other
// digit, any byte into a letter or a NUL, or removed) and puts NUL bytes
// before it and at the end of the file. Each damaged file is refused with
// its bytes unchanged, or opens with every record as written, and then
// keeps a new write across a reopen: no damage may make records vanish or
// later writes land over them.
func TestFileDamageNeverLosesRecordsSilently(t *testing.T) {
	_, data, want := writeDamageFile(t)
	type damage struct {
		name string
		file []byte
	}
	var cases []damage
	for _, key := range []string{"r:R-1:alice", "r:R-3:alice"} {
		start, header := commandOf(t, data, key)
		end := header + bytes.IndexByte(data[header:], '\n') + 1
		edit := func(at int, with string, remove int) []byte {
			return bytes.Join([][]byte{data[:at], []byte(with), data[at+remove:]}, nil)
		}
		cases = append(cases, damage{fmt.Sprintf("%s: NULs before it", key), edit(start, "\x00\x00\x00", 0)})
		for at := start; at < end; at++ {
			if at >= start+len("*3\r\n$3\r\nset\r\n$11\r\n") && at < header-2 {
				continue // the key: a record's bytes, not its framing
			}
			name := fmt.Sprintf("%s: byte %d (%q)", key, at-start, data[at])
			for _, with := range []string{"x", "\x00"} {
				cases = append(cases, damage{fmt.Sprintf("%s into %q", name, with), edit(at, with, 1)})
			}
			cases = append(cases, damage{name + " removed", edit(at, "", 1)})
			if c := data[at]; c >= '0' && c <= '9' {
				for d := byte('0'); d <= '9'; d++ {
					if d != c {
						cases = append(cases, damage{fmt.Sprintf("%s into %c", name, d), edit(at, string(d), 1)})
					}
				}
			}
		}
	}
	cases = append(cases, damage{"NULs at the end", append(data[:len(data):len(data)], "\x00\x00\x00"...)})

	var refused int
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "data.db")
		noErr(t, os.WriteFile(path, c.file, 0o600))
		s, err := store.Open(path)
		if err != nil {
			refused++
			if got, rerr := os.ReadFile(path); rerr != nil || !bytes.Equal(got, c.file) {
				t.Errorf("%s: refused (%v), but the file changed", c.name, err)
			}
			continue
		}
		if got := dump(t, s); got != want {
			t.Errorf("%s: opened, answering\n%s\nwant every record as written:\n%s", c.name, got, want)
		}
		noErr(t, s.CreateReferral(context.Background(), referral("alice", "AFTER", "2025-10-13T09:00:09Z")))
		noErr(t, s.Close())
		s, err = store.Open(path)
		if err != nil {
			t.Errorf("%s: opened, took a write, then does not open: %v", c.name, err)
			continue
		}
		if _, err := s.GetReferral(context.Background(), "alice", "AFTER"); err != nil {
			t.Errorf("%s: the write after opening: %v", c.name, err)
		}
		noErr(t, s.Close())
	}
	if refused == 0 {
		t.Errorf("none of %d damaged files was refused: the damage did not reach the framing", len(cases))
	}
}

// fileSize is the size of the file at path.
func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	noErr(t, err)
	return fi.Size()
}

// TestFileWithAnExpiryRefused: a data file whose write sets a record with
// an expiry ("set key value ex seconds"), which the store never writes,
// was edited by hand or by another program. buntdb would delete that
// record by itself when it expires, behind the store's listing index, so
// the listing would show a record that reads 404. Open refuses the file,
// naming the write, and leaves it untouched; with the expiry removed as
// the message says, it opens with every record.
func TestFileWithAnExpiryRefused(t *testing.T) {
	path, data, want := writeDamageFile(t)
	start, _ := commandOf(t, data, "r:R-2:alice")
	next, _ := commandOf(t, data, "r:R-3:alice")
	edited := bytes.Join([][]byte{data[:start], []byte("*5"), data[start+2 : next], []byte("$2\r\nex\r\n$4\r\n3600\r\n"), data[next:]}, nil)
	noErr(t, os.WriteFile(path, edited, 0o600))

	_, err := store.Open(path)
	if !errors.Is(err, store.ErrDamaged) {
		t.Fatalf("a data file with an expiry: %v, want ErrDamaged", err)
	}
	for _, want := range []string{path, fmt.Sprintf("at byte %d", start), "expiry", "left untouched"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	got, rerr := os.ReadFile(path)
	noErr(t, rerr)
	if !bytes.Equal(got, edited) {
		t.Fatalf("the refused file changed: %d bytes, were %d", len(got), len(edited))
	}

	noErr(t, os.WriteFile(path, data, 0o600)) // the expiry removed by hand
	s := mustOpen(t, path)
	defer s.Close()
	if got := dump(t, s); got != want {
		t.Errorf("after removing the expiry the store answers:\n%s\nwant:\n%s", got, want)
	}
}
