package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Fault is what a FaultProxy does to the command it fails.
type Fault int

const (
	// Drop closes the connection instead of forwarding the command: it
	// never runs, and the client sees the connection reset.
	Drop Fault = iota
	// ErrorReply makes Redis answer the command with an error instead of
	// running it: OOM, as under maxmemory (the proxy sends a script that
	// answers it in its place, so the error comes back in order behind the
	// replies already due). At MULTI or EXEC it is Drop.
	ErrorReply
	// LoseReply forwards the command and closes the client's connection
	// before its reply: the command runs, and the client never learns it
	// did, as when a read times out (go-redis then retries it).
	LoseReply
	// LoseReplyThenRefuse is LoseReply after which the proxy closes every
	// connection, open or new, until Heal: the command ran and its node
	// died before answering, as a master killed in a failover.
	LoseReplyThenRefuse
)

// FaultProxy is a TCP proxy in front of a redis-server that reads the RESP
// commands clients send, counts them, and fails the n-th one once armed.
// Shopify/toxiproxy cuts or slows connections by bytes and time but
// cannot count commands, which a test of "every command of this call may
// fail" needs; reading RESP request framing is all that takes. Replies are
// copied back untouched.
type FaultProxy struct {
	// Addr is its host:port on loopback; URL its redis:// URL.
	Addr, URL string

	target string
	ln     net.Listener

	mu      sync.Mutex
	seen    []string                // first word of each command since Arm, upper case
	fail    int                     // 1-based index of the command to fail; 0: none
	match   func(cmd []string) bool // which commands count towards fail; nil: all
	counted int                     // commands counted towards fail
	fault   Fault
	fired   bool
	conns   map[net.Conn]struct{}
	// refusing closes every connection (LoseReplyThenRefuse) until Heal;
	// refused counts the connections it closed at accept.
	refusing bool
	refused  int
}

// maxSeen bounds the commands a FaultProxy remembers between two Arms.
const maxSeen = 100000

// NewFaultProxy starts a proxy to s, closed at t.Cleanup.
func NewFaultProxy(t testing.TB, s *Server) *FaultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: fault proxy: %v", err)
	}
	p := &FaultProxy{Addr: ln.Addr().String(), target: s.Addr, ln: ln, conns: map[net.Conn]struct{}{}}
	p.URL = "redis://" + p.Addr + "/0"
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Arm counts commands from zero again and fails the n-th from now with f
// (n 0 fails none: the proxy only counts).
func (p *FaultProxy) Arm(n int, f Fault) { p.ArmMatching(nil, n, f) }

// ArmMatching is Arm counting only the commands match accepts (nil: all);
// match gets the command's name, in upper case, and its arguments.
func (p *FaultProxy) ArmMatching(match func(cmd []string) bool, n int, f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen, p.match, p.counted, p.fail, p.fault, p.fired = p.seen[:0], match, 0, n, f, false
}

// Touching matches the commands with an argument that contains s, such as
// a key's prefix.
func Touching(s string) func(cmd []string) bool {
	return func(cmd []string) bool {
		for _, arg := range cmd[1:] {
			if strings.Contains(arg, s) {
				return true
			}
		}
		return false
	}
}

// Seen is the name of every command since Arm, in the order received.
func (p *FaultProxy) Seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// Fired reports whether the armed fault happened.
func (p *FaultProxy) Fired() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fired
}

// Heal ends LoseReplyThenRefuse's refusal: connections are served again.
func (p *FaultProxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusing = false
}

// Refused is how many connections the proxy closed at accept while
// refusing.
func (p *FaultProxy) Refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// HealAfterRefusals heals the proxy once it has refused more than n
// connections (a client that retries n times has given up) or done is
// closed (the call under test ended first), whichever comes first. It
// polls the refusal count: the count is the signal, the pause only paces
// the polling.
func (p *FaultProxy) HealAfterRefusals(n int, done <-chan struct{}) {
	for p.Refused() <= n {
		select {
		case <-done:
			p.Heal()
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	p.Heal()
}

// refuse reports whether a new connection is to be closed at once, and
// counts it.
func (p *FaultProxy) refuse() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refusing {
		p.refused++
	}
	return p.refusing
}

func (p *FaultProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
}

func (p *FaultProxy) track(c net.Conn, on bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *FaultProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if p.refuse() {
			_ = client.Close()
			continue
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.track(client, true)
		p.track(server, true)
		lose := new(atomic.Bool)
		go p.replies(client, server, lose)
		go p.commands(client, server, lose)
	}
}

// replies copies Redis's replies back to the client until either side
// ends. Once lose is set, the next reply closes the client's connection
// instead: the command it answers has run.
func (p *FaultProxy) replies(client, server net.Conn, lose *atomic.Bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 && lose.Load() {
			p.dropIfRefusing()
			break
		}
		if n > 0 {
			if _, werr := client.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = client.Close()
	_ = server.Close()
	p.track(client, false)
	p.track(server, false)
}

// dropIfRefusing closes every open connection once the proxy refuses
// (the reply of LoseReplyThenRefuse's command has come): a client's other
// pooled connections die with the node too.
func (p *FaultProxy) dropIfRefusing() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.refusing {
		return
	}
	for c := range p.conns {
		_ = c.Close()
	}
}

// faultReply is the error ErrorReply makes Redis answer: a server state
// the sandbox documents as the backend failing (out of memory under
// maxmemory), one go-redis does not retry, so the caller meets it. An
// unknown command's "ERR" stood in before; the sandbox rightly answers an
// error it cannot place with a 500, and a ./test run met that 500 when a
// request's first command was the store's rather than the shared read.
const faultReply = "OOM redistest fault: command not allowed when used memory > 'maxmemory'"

// faultCommand is what ErrorReply sends in the failed command's place: a
// script whose answer is faultReply, so the error comes back in order.
var faultCommand = resp("EVAL", "return redis.error_reply(\""+faultReply+"\")", "0")

// queuedFaultCommand is what ErrorReply sends in place of a command queued
// in a MULTI: an unknown command, which Redis refuses as it queues it and
// so aborts the whole transaction at EXEC, as it does a write refused for
// memory. A script would queue, and EXEC would apply the rest.
var queuedFaultCommand = resp("redistest-fault-inject")

// resp encodes a command as a RESP array of bulk strings.
func resp(args ...string) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// commands forwards the client's commands one by one, failing the armed one.
func (p *FaultProxy) commands(client, server net.Conn, lose *atomic.Bool) {
	r := bufio.NewReader(client)
	queuing := false // inside MULTI, until EXEC or DISCARD
	for {
		raw, cmd, err := readCommand(r)
		if err != nil {
			_ = server.Close()
			return
		}
		inMulti := queuing
		switch strings.ToUpper(cmd[0]) {
		case "MULTI":
			queuing = true
		case "EXEC", "DISCARD":
			queuing = false
		}
		switch fault, fail := p.record(cmd); {
		case !fail:
			if _, err := server.Write(raw); err != nil {
				return
			}
		case fault == Drop:
			_ = client.Close()
			_ = server.Close()
			return
		case fault == ErrorReply:
			refusal := faultCommand
			if inMulti {
				refusal = queuedFaultCommand
			}
			if _, err := server.Write(refusal); err != nil {
				return
			}
		case fault == LoseReply || fault == LoseReplyThenRefuse:
			if fault == LoseReplyThenRefuse {
				p.mu.Lock()
				p.refusing = true
				p.mu.Unlock()
			}
			lose.Store(true) // replies closes the client at the reply
			_, _ = server.Write(raw)
			return
		}
	}
}

// record counts a command and reports whether it is the one to fail.
func (p *FaultProxy) record(cmd []string) (Fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.seen) < maxSeen {
		p.seen = append(p.seen, cmd[0])
	}
	if p.match == nil || p.match(cmd) {
		p.counted++
	}
	if p.fail > 0 && p.counted == p.fail && !p.fired {
		p.fired = true
		if p.fault == ErrorReply && (cmd[0] == "MULTI" || cmd[0] == "EXEC") {
			// Redis never answers these with an error and stays in (or
			// out of) a transaction: an error in MULTI's place would run
			// the queued commands one by one, in EXEC's it would leave the
			// connection inside MULTI for the next call. A failure there
			// is a closed connection.
			return Drop, true
		}
		return p.fault, true
	}
	return 0, false
}

// readCommand reads one command as the client sent it: a RESP array of
// bulk strings, or an inline command line. It returns its bytes and its
// words, the first (the command's name) in upper case.
func readCommand(r *bufio.Reader) (raw []byte, cmd []string, err error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return nil, nil, err
	}
	if line[0] != '*' {
		cmd = strings.Fields(string(line))
		if len(cmd) == 0 {
			cmd = []string{""}
		}
		cmd[0] = strings.ToUpper(cmd[0])
		return line, cmd, nil
	}
	n, err := strconv.Atoi(string(bytes.TrimRight(line[1:], "\r\n")))
	if err != nil || n < 1 {
		return nil, nil, fmt.Errorf("redistest: bad array header %q", line)
	}
	var buf bytes.Buffer
	buf.Write(line)
	for i := range n {
		head, err := r.ReadBytes('\n')
		if err != nil {
			return nil, nil, err
		}
		if head[0] != '$' {
			return nil, nil, errors.New("redistest: a command argument is not a bulk string")
		}
		size, err := strconv.Atoi(string(bytes.TrimRight(head[1:], "\r\n")))
		if err != nil || size < 0 {
			return nil, nil, fmt.Errorf("redistest: bad bulk header %q", head)
		}
		body := make([]byte, size+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, nil, err
		}
		buf.Write(head)
		buf.Write(body)
		arg := string(body[:size])
		if i == 0 {
			arg = strings.ToUpper(arg)
		}
		cmd = append(cmd, arg)
	}
	return buf.Bytes(), cmd, nil
}
