package scenarios

import (
	"net"
	"net/http"
	"strconv"
	"time"
)

// Fault is a broken connection instead of an answer.
type Fault string

// Fault kinds.
const (
	FaultNone      Fault = ""
	FaultReset     Fault = "reset"     // TCP RST: the client sees ECONNRESET
	FaultEmpty     Fault = "empty"     // close without a response: the client sees EOF
	FaultHang      Fault = "hang"      // hold the request until the client gives up
	FaultMalformed Fault = "malformed" // 200 with a truncated JSON body
	// FaultDropAfterCommit lets the request be handled and its result
	// stored (a referral created, a token issued), then resets the
	// connection instead of sending the answer: the write happened but
	// the client cannot know. See DropAfterCommit.
	FaultDropAfterCommit Fault = "drop-after-commit"
)

// faultNames lists the fault kinds, for error messages.
const faultNames = "reset, empty, hang, malformed, drop-after-commit"

// MalformedBody is the body of a FaultMalformed answer: the start of a trials
// list, cut off mid-string, so any JSON decoder fails on it.
const MalformedBody = `{"trials":[{"trialId":"TR`

// hangLimit bounds a hang when the client never gives up, so a forgotten
// client cannot pin a handler goroutine for ever.
const hangLimit = 10 * time.Minute

// valid reports whether f is a known fault kind (FaultNone included).
func (f Fault) valid() bool {
	switch f {
	case FaultNone, FaultReset, FaultEmpty, FaultHang, FaultMalformed, FaultDropAfterCommit:
		return true
	}
	return false
}

// ApplyFault answers r with fault f. Nothing must have been written to w yet.
// FaultNone does nothing; FaultDropAfterCommit needs the handler, see
// DropAfterCommit.
//
// Reset and empty take the connection over (hijack) and close it, with
// SO_LINGER 0 for reset so the kernel sends RST instead of FIN. Where the
// connection cannot be taken over (HTTP/2), ApplyFault aborts the response
// with panic(http.ErrAbortHandler), net/http's documented way to abort a
// handler: the server resets the stream without logging a stack trace. Any
// recovery middleware in front of the handler must re-panic that value.
//
// Hang blocks until the request's context is done (the client gave up or the
// server closed the connection), or for at most ten minutes, and then closes
// the connection without an answer. It does not hijack first, because only
// the server's own connection reader notices a client hanging up.
func ApplyFault(w http.ResponseWriter, r *http.Request, f Fault) {
	switch f {
	case FaultReset:
		closeConn(w, true)
	case FaultEmpty:
		closeConn(w, false)
	case FaultHang:
		timer := time.NewTimer(hangLimit)
		defer timer.Stop()
		select {
		case <-r.Context().Done():
		case <-timer.C:
		}
		closeConn(w, false)
	case FaultMalformed:
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(MalformedBody)))
		w.WriteHeader(http.StatusOK)
		// A write error means the client is gone; there is nobody to tell.
		_, _ = w.Write([]byte(MalformedBody))
	}
}

// closeConn hijacks the connection behind w and closes it, abruptly (RST)
// when reset is true. It aborts the handler when hijacking is impossible.
func closeConn(w http.ResponseWriter, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if reset {
		if tcp := tcpConn(conn); tcp != nil {
			// Best effort: if SetLinger fails the client sees EOF instead.
			_ = tcp.SetLinger(0)
		}
	}
	_ = conn.Close()
}

// tcpConn finds the TCP connection under c, unwrapping TLS and other
// wrappers that expose NetConn, or returns nil.
func tcpConn(c net.Conn) *net.TCPConn {
	for c != nil {
		if tcp, ok := c.(*net.TCPConn); ok {
			return tcp
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}

// DropAfterCommit serves r with next as usual, so whatever it stores is
// stored, but keeps its answer: the connection is then reset (as
// FaultReset) and the client gets no answer at all. committed is told the
// status and headers next answered with, which nobody will receive,
// before the connection goes: on HTTP/2 the reset aborts the handler.
func DropAfterCommit(w http.ResponseWriter, r *http.Request, next http.Handler, committed func(status int, header http.Header)) {
	held := &heldAnswer{header: http.Header{}}
	next.ServeHTTP(held, r)
	if held.status == 0 {
		held.status = http.StatusOK
	}
	committed(held.status, held.header)
	closeConn(w, true)
}

// heldAnswer is a ResponseWriter that keeps the status and headers and
// discards the body: the answer DropAfterCommit never sends.
type heldAnswer struct {
	header http.Header
	status int
}

func (h *heldAnswer) Header() http.Header { return h.header }

func (h *heldAnswer) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *heldAnswer) Write(b []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	return len(b), nil
}
