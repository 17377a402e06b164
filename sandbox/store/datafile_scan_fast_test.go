package store

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// partByPart never parses in place: scanLoadWith then reads every command
// with scanCommand, as before bufferedCommand.
func partByPart(*bufio.Reader) (int64, bool, bool) { return 0, false, false }

// scanBothWays scans data, written to a file, in place and part by part,
// and fails t when the two disagree.
func scanBothWays(t *testing.T, dir string, data []byte, what string) loadStop {
	t.Helper()
	path := filepath.Join(dir, "scan.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fast, ferr := scanLoadWith(f, bufferedCommand)
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	slow, serr := scanLoadWith(f, partByPart)
	if fast != slow || (ferr == nil) != (serr == nil) {
		t.Fatalf("%s: in place %+v, %v; part by part %+v, %v", what, fast, ferr, slow, serr)
	}
	return fast
}

// commandBytes is a command as buntdb writes it.
func commandBytes(parts ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(parts))
	for _, p := range parts {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(p), p)
	}
	return b.Bytes()
}

// TestScanInPlaceAgreesWithPartByPart: a data file larger than the scan's
// buffer (so that commands straddle its refills), whole and then damaged
// at random in every way the damage check looks for (a byte changed, a
// length's digit raised, NUL bytes put in, the file cut short, a write
// with an expiry, a value's end changed), scans to the same stop in place
// as part by part.
func TestScanInPlaceAgreesWithPartByPart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(9, 27))
	var file bytes.Buffer
	for i := 0; file.Len() < 3*scanBufferSize; i++ {
		key := fmt.Sprintf("r:alice:%06d", i)
		if i%50 == 7 {
			file.Write(commandBytes("del", key))
		} else {
			file.Write(commandBytes("set", key, strings.Repeat("x", rng.IntN(2000))))
		}
	}
	// The last write has an expiry: a scan that stops at damage before it
	// (an invalid command) does not find it, so where each way stopped
	// shows in what it reports.
	last := int64(file.Len())
	file.Write(commandBytes("SET", "r:alice:last", "v", "EX", "60"))
	whole := file.Bytes()
	if stop := scanBothWays(t, dir, whole, "whole file"); stop.torn || stop.nulAt >= 0 || stop.expiresAt != last {
		t.Fatalf("whole file scanned to %+v: want no tear, no NUL and the expiry at %d", stop, last)
	}
	for round := range 180 {
		data := bytes.Clone(whole)
		at := rng.IntN(len(data))
		var what string
		switch round % 6 {
		case 0:
			data[at] = byte(rng.IntN(256))
			what = fmt.Sprintf("byte %d changed", at)
		case 1:
			i := bytes.IndexByte(data[at:], '$')
			if i < 0 {
				continue
			}
			data[at+i+1] = '9'
			what = fmt.Sprintf("length at %d raised", at+i)
		case 2:
			data = append(data[:at:at], append(make([]byte, 1+rng.IntN(8)), data[at:]...)...)
			what = fmt.Sprintf("NULs put in at %d", at)
		case 3:
			data = data[:at]
			what = fmt.Sprintf("cut at %d", at)
		case 4:
			data = append(data[:at:at], append(commandBytes("set", "r:bob:1", "v", "ex", "5"), data[at:]...)...)
			what = fmt.Sprintf("an expiring write put in at %d", at)
		case 5:
			i := bytes.Index(data[at:], []byte("\r\n*"))
			if i < 0 {
				continue
			}
			data[at+i+rng.IntN(2)] = 'x'
			what = fmt.Sprintf("the end of the value before %d changed", at+i+2)
		}
		scanBothWays(t, dir, data, what)
	}
}

// FuzzScanInPlace holds the two ways of reading a command to one answer
// on any file (.ci/fuzz runs it).
func FuzzScanInPlace(f *testing.F) {
	f.Add(commandBytes("set", "r:alice:1", "{}"))
	f.Add(append(commandBytes("set", "k", "v", "ex", "9"), 0, 0))
	f.Add(append(commandBytes("del", "k"), commandBytes("set", "k", "v")[:9]...))
	f.Add([]byte("*2\r\n$3\r\ndel\r\n$999\r\nk\r\n*1\r\n$1\r\nx\r\n"))
	f.Add(append([]byte("*1\r\n$1\r\nxy\n"), commandBytes("set", "k", "v", "ex", "9")...))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		scanBothWays(t, dir, data, fmt.Sprintf("%q", data))
	})
}
