package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// buntdb's loader (readLoad in buntdb.go) replays the data file one
// command at a time: "*N\r\n" and then N parts "$len\r\n<len bytes>\r\n",
// with NUL bytes between commands skipped. When a read runs out of file it
// truncates the file where that command starts and carries on, which is
// right for a torn tail (the process died writing its last transaction)
// but not for damage further back: a length field whose digits were
// corrupted into a larger number also runs out of file, and the cut then
// takes every record after it. And a NUL byte it skips is missing from
// its count of the file's length, so after NULs that are followed by
// records it cuts, or appends its next write, that many bytes too early,
// over the last records. checkDamage reads the file as the loader does,
// before the loader may cut it, and refuses such a file.

// scanBufferSize is the read buffer of the scan: large enough that reading
// a big file costs few system calls.
const scanBufferSize = 1 << 20

// loadStop is where buntdb's loader stops in a data file.
type loadStop struct {
	// torn: the file ends inside the command that starts at start (after
	// any NUL bytes), and the loader would truncate the file at cut, the
	// end of the last whole command. (The loader leaves NUL bytes out of
	// its count; when none comes before a whole command, as checkDamage
	// requires, its count is the offset.)
	torn       bool
	start, cut int64
	// nulAt is the offset of the first NUL byte that comes before a whole
	// command, or -1.
	nulAt int64
	size  int64
	// expiresAt is the offset of the first whole command that sets a
	// record with an expiry ("set key value ex seconds"), or -1.
	expiresAt int64
}

// checkDamage reports, as ErrDamaged, a data file that buntdb would open by
// cutting off or overwriting acknowledged records; the file is not
// changed. A file that buntdb loads whole, whose only damage is a torn
// tail, or that buntdb itself refuses as invalid, passes. A missing file
// passes: buntdb creates it.
func checkDamage(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read data file: %w", err)
	}
	defer f.Close()
	stop, err := scanLoad(f)
	if err != nil {
		return fmt.Errorf("read data file: %w", err)
	}
	if stop.nulAt >= 0 {
		return fmt.Errorf("%w at byte %d: NUL bytes there come before further records; buntdb skips them without counting them, "+
			"so it would cut the file, or append its next write, short of where the records end, over the last of them. "+
			"The file is left untouched: restore it from a backup, or remove the NUL bytes by hand",
			ErrDamaged, stop.nulAt)
	}
	if stop.expiresAt >= 0 {
		// The store never writes an expiry, and buntdb would delete such
		// a record by itself when it expires, behind the store's listing
		// index: the listing would show a record that reads 404.
		return fmt.Errorf("%w at byte %d: the write there stores a record with an expiry (\"set\" with \"ex\" and seconds), "+
			"which the sandbox never writes, so the file was edited by hand or by another program. "+
			"The file is left untouched: restore it from a backup, or remove the \"ex\" and its seconds from that write by hand "+
			"(its part count from *5 to *3)",
			ErrDamaged, stop.expiresAt)
	}
	if !stop.torn {
		return nil
	}
	next, writes, err := laterCommands(f, stop.start)
	if err != nil {
		return fmt.Errorf("read data file: %w", err)
	}
	if next < 0 {
		return nil // a torn tail: buntdb cuts only the write a crash interrupted
	}
	return fmt.Errorf("%w at byte %d: the write that starts there claims more bytes than the file holds, "+
		"yet another write starts after it at byte %d, so it is not a write a crash cut short; "+
		"opening would cut the file at byte %d and lose the %d bytes after it (%d later writes). "+
		"The file is left untouched: restore it from a backup, remove the damaged write (bytes %d to %d) by hand, "+
		"or truncate the file at byte %d to accept the loss",
		ErrDamaged, stop.start, next, stop.cut, stop.size-stop.cut, writes, stop.start, next-1, stop.cut)
}

// scanLoad reads f from its start as buntdb's loader does, checking the
// structure of every command but keeping none of it, and reports where
// the loader stops. A structural error the loader reports as invalid ends
// the scan as if the file ended cleanly there: buntdb refuses the file.
func scanLoad(f *os.File) (loadStop, error) { return scanLoadWith(f, bufferedCommand) }

// scanLoadWith is scanLoad with inPlace in bufferedCommand's place: the
// tests hold the two ways of reading a command to one answer by passing
// one that never parses in place.
func scanLoadWith(f *os.File, inPlace func(*bufio.Reader) (size int64, expires, ok bool)) (loadStop, error) {
	fi, err := f.Stat()
	if err != nil {
		return loadStop{}, err
	}
	stop := loadStop{nulAt: -1, size: fi.Size(), expiresAt: -1}
	r := bufio.NewReaderSize(f, scanBufferSize)
	var pos, end int64  // the offset read to; the end of the last whole command
	gapNUL := int64(-1) // the first NUL since the last whole command
	for {
		// The next whole command, in place from the buffer when it can be
		// (inPlace), read part by part otherwise.
		n, expires, ok := inPlace(r)
		if ok {
			_, _ = r.Discard(int(n))
		} else {
			c, err := r.ReadByte()
			if err == io.EOF {
				return stop, nil
			}
			if err != nil {
				return stop, err
			}
			if c == 0 {
				if gapNUL < 0 {
					gapNUL = pos
				}
				pos++
				continue
			}
			_ = r.UnreadByte()
			n, expires, err = scanCommand(r)
			switch {
			case errors.Is(err, io.ErrUnexpectedEOF):
				stop.torn, stop.start, stop.cut = true, pos, end
				return stop, nil
			case errors.Is(err, errInvalidCommand):
				return stop, nil
			case err != nil:
				return stop, err
			}
		}
		if gapNUL >= 0 && stop.nulAt < 0 {
			stop.nulAt = gapNUL
		}
		gapNUL = -1
		if expires && stop.expiresAt < 0 {
			stop.expiresAt = pos
		}
		pos += n
		end = pos
	}
}

// errInvalidCommand marks a command buntdb's loader refuses as invalid.
var errInvalidCommand = errors.New("invalid command")

// scanCommand reads one whole command from r and returns its length in
// bytes and whether it sets a record with an expiry (five parts, the
// first "set": buntdb writes "set key value ex seconds" for a record that
// expires): io.ErrUnexpectedEOF when the file ends inside it,
// errInvalidCommand when the loader would refuse it.
func scanCommand(r *bufio.Reader) (size int64, expires bool, err error) {
	line, err := readLine(r)
	if err != nil {
		return 0, false, err
	}
	parts, ok := headerNumber(line, '*')
	if !ok {
		return 0, false, errInvalidCommand
	}
	size = int64(len(line))
	for i := range parts {
		line, err := readLine(r)
		if err != nil {
			return 0, false, err
		}
		n, ok := headerNumber(line, '$')
		if !ok {
			return 0, false, errInvalidCommand
		}
		size += int64(len(line))
		if i == 0 && parts == 5 && n == 3 {
			name, _ := r.Peek(3)
			expires = bytes.EqualFold(name, []byte("set"))
		}
		if d, err := r.Discard(int(n)); int64(d) < n {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, false, err
		}
		end, err := r.Peek(2)
		if len(end) < 2 {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, false, err
		}
		if end[0] != '\r' || end[1] != '\n' {
			return 0, false, errInvalidCommand
		}
		_, _ = r.Discard(2)
		size += n + 2
	}
	return size, expires, nil
}

// readLine reads through the next '\n': io.ErrUnexpectedEOF when the file
// ends first. A line longer than the buffer is no header buntdb writes.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	switch {
	case err == io.EOF:
		return nil, io.ErrUnexpectedEOF
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, errInvalidCommand
	}
	return line, err
}

// maxHeaderNumber is more than any file holds: a header number above it
// is taken as this, so that it still runs past the end of the file.
const maxHeaderNumber = 1 << 50

// headerNumber parses a header line, kind then decimal digits then
// "\r\n", as buntdb's loader does.
func headerNumber(line []byte, kind byte) (int64, bool) {
	if len(line) < 4 || line[0] != kind || line[len(line)-2] != '\r' {
		return 0, false
	}
	var n int64
	for _, c := range line[1 : len(line)-2] {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = min(n*10+int64(c-'0'), maxHeaderNumber)
	}
	return n, true
}

// laterCommands looks in f after offset start, where the torn command
// begins, for the start of another command: a header line "*N\r\n" just
// after a newline or a NUL byte, followed by a part's "$" or by the end of
// the file. It returns the offset of the first (-1 if none) and how many
// there are. Values never hold "\r", so a record cannot look like one.
func laterCommands(f *os.File, start int64) (first int64, count int, err error) {
	if _, err := f.Seek(start+1, io.SeekStart); err != nil {
		return 0, 0, err
	}
	r := bufio.NewReaderSize(f, scanBufferSize)
	first = -1
	for pos := start + 1; ; pos++ {
		c, err := r.ReadByte()
		if err == io.EOF {
			return first, count, nil
		}
		if err != nil {
			return 0, 0, err
		}
		if c != '\n' && c != 0 {
			continue
		}
		if startsCommand(r) {
			if first < 0 {
				first = pos + 1
			}
			count++
		}
	}
}

// startsCommand reports whether r's next bytes begin a command.
func startsCommand(r *bufio.Reader) bool {
	head, _ := r.Peek(24)
	if len(head) == 0 || head[0] != '*' {
		return false
	}
	for i := 1; i < len(head); i++ {
		if head[i] == '\n' {
			if _, ok := headerNumber(head[:i+1], '*'); !ok {
				return false
			}
			return i+1 == len(head) || head[i+1] == '$'
		}
	}
	return false
}
