package sandbox

import (
	"bufio"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"
)

// tlsRecordHandshake is the first byte of every TLS connection.
const tlsRecordHandshake = 0x16

// sniffTimeout bounds how long a new connection may stay silent before the
// listener gives up on it; it matches the header timeout.
const sniffTimeout = ReadHeaderTimeout

// Backoff of the accept loop after a temporary error (EMFILE when the
// process is at its open-files limit, say): as net/http's Serve, 5 ms
// doubling to 1 s, reset by the next connection accepted.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// NewTLSListener serves TLS on ln, and also lets plain HTTP through on the
// same port instead of failing it in the TLS layer: with --tls the sandbox
// answers such a request with a clear 400 and journals it, so the
// conformance report can say a client spoke plain HTTP. Each connection's
// first byte decides; sniffing happens off the Accept loop, so a silent
// client cannot hold other connections back. A temporary Accept error is
// retried with backoff and logged to logger (nil: nowhere) once per burst;
// any other error stops the listener.
func NewTLSListener(ln net.Listener, cfg *tls.Config, logger *slog.Logger) net.Listener {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &sniffingListener{
		Listener: ln, cfg: cfg, log: logger, conns: make(chan net.Conn),
		closing: make(chan struct{}), done: make(chan struct{}), sniffed: map[net.Conn]bool{},
	}
	go l.acceptLoop()
	return l
}

type sniffingListener struct {
	net.Listener
	cfg   *tls.Config
	log   *slog.Logger
	conns chan net.Conn

	// closing is closed by Close; done once every connection accepted
	// before it has been handed on or dropped, so that a request a client
	// sent before a shutdown is served rather than cut off.
	closeOnce sync.Once
	closing   chan struct{}
	done      chan struct{}
	sniffing  sync.WaitGroup

	mu      sync.Mutex
	err     error
	closed  bool
	sniffed map[net.Conn]bool // connections whose first byte is awaited
}

// closeGrace is how long, once the listener is closed, a connection
// accepted before may take to send its first byte and be taken by Serve.
const closeGrace = time.Second

func (l *sniffingListener) acceptLoop() {
	var backoff time.Duration // 0 outside a burst of temporary errors
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			backoff = 0
			l.sniffing.Add(1)
			go l.sniff(c)
			continue
		}
		if !temporary(err) {
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			l.sniffing.Wait()
			close(l.done)
			return
		}
		if backoff == 0 {
			backoff = acceptBackoffMin
			l.log.Warn("TLS listener: accept failed; retrying with backoff", "err", err,
				"backoff_from", acceptBackoffMin.String(), "backoff_to", acceptBackoffMax.String())
		} else {
			backoff = min(2*backoff, acceptBackoffMax)
		}
		select {
		case <-time.After(backoff):
		case <-l.closing:
		}
	}
}

// temporary reports whether an Accept error may pass, as net/http judges
// it: EMFILE, ENFILE, ECONNABORTED and their kind say so through the
// (otherwise deprecated) Temporary method.
func temporary(err error) bool {
	var ne interface{ Temporary() bool }
	return errors.As(err, &ne) && ne.Temporary()
}

// sniff reads the first byte and hands the connection on as TLS or plain.
// Once the listener is closed, the connection is still handed on if it
// speaks and Serve takes it within closeGrace.
func (l *sniffingListener) sniff(c net.Conn) {
	defer l.sniffing.Done()
	br := bufio.NewReaderSize(c, 1)
	l.mu.Lock()
	wait := sniffTimeout
	if l.closed {
		wait = closeGrace
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	l.sniffed[c] = true
	l.mu.Unlock()
	first, err := br.Peek(1)
	l.mu.Lock()
	delete(l.sniffed, c)
	_ = c.SetReadDeadline(time.Time{})
	l.mu.Unlock()
	if err != nil {
		_ = c.Close()
		return
	}
	var out net.Conn = &peekedConn{Conn: c, r: br}
	if first[0] == tlsRecordHandshake {
		out = tls.Server(out, l.cfg)
	}
	select {
	case l.conns <- out:
		return
	case <-l.closing:
	}
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case l.conns <- out:
	case <-t.C:
		_ = c.Close()
	}
}

// Accept returns the next sniffed connection.
func (l *sniffingListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.err == nil {
			return nil, net.ErrClosed
		}
		return nil, l.err
	}
}

// Close stops accepting new connections. Those already accepted are
// still handed to Accept if their first byte comes within closeGrace;
// Accept reports the listener closed once none is left.
func (l *sniffingListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		for c := range l.sniffed {
			_ = c.SetReadDeadline(time.Now().Add(closeGrace))
		}
		l.mu.Unlock()
		close(l.closing)
	})
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// peekedConn replays the sniffed byte before reading on from the socket.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

// Read reads the sniffed byte first, then the socket.
func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// NetConn exposes the socket, for faults that reset the connection.
func (c *peekedConn) NetConn() net.Conn { return c.Conn }
