package store

import (
	"bufio"
	"bytes"
)

// fastScanRefill is how few buffered bytes make scanLoad fill its buffer
// before parsing in place: a command longer than what is left goes the
// slow way (scanCommand), so the buffer is topped up well before it runs
// that low.
const fastScanRefill = 64 << 10

// bufferedCommand parses the next command in place in r's buffer (topped
// up first when it runs low), consuming nothing, when it lies whole
// within the buffered bytes and is well formed: its length and whether it
// sets a record with an expiry, as scanCommand reports them. ok is false for anything else (a NUL byte, a
// command the buffer does not hold whole, any damage), and scanLoad then
// reads it with scanCommand, which explains it. scanCommand alone went
// through bufio call by call, about 14 calls a record: 0.5 s of opening a
// file of a million referrals, whose reading alone takes 0.08 s.
func bufferedCommand(r *bufio.Reader) (size int64, expires, ok bool) {
	if r.Buffered() < fastScanRefill {
		// An error ends nothing here: scanCommand's reads meet it again.
		_, _ = r.Peek(r.Size())
	}
	buf, _ := r.Peek(r.Buffered())
	line, found := bufferedLine(buf)
	if !found {
		return 0, false, false
	}
	parts, isHeader := headerNumber(line, '*')
	if !isHeader {
		return 0, false, false
	}
	at := len(line)
	for i := range parts {
		line, found := bufferedLine(buf[at:])
		if !found {
			return 0, false, false
		}
		n, isHeader := headerNumber(line, '$')
		if !isHeader || int64(len(buf)-at-len(line)) < n+2 {
			return 0, false, false
		}
		at += len(line)
		data := buf[at : at+int(n)+2]
		if data[n] != '\r' || data[n+1] != '\n' {
			return 0, false, false
		}
		if i == 0 && parts == 5 && n == 3 {
			expires = bytes.EqualFold(data[:3], []byte("set"))
		}
		at += int(n) + 2
	}
	return int64(at), expires, true
}

// bufferedLine is buf's first line, through its '\n'; found is false when
// buf holds no '\n'.
func bufferedLine(buf []byte) (line []byte, found bool) {
	i := bytes.IndexByte(buf, '\n')
	if i < 0 {
		return nil, false
	}
	return buf[:i+1], true
}
