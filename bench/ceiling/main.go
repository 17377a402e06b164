// Command ceiling is the throughput ceiling bench/run compares the sandbox
// against: a bare net/http handler answering {"message":"pong"}, with no
// router, middleware, authentication or logging. Whatever the sandbox adds
// costs throughput relative to this server on the same machine under the
// same load.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// pong is the whole response body.
const pong = `{"message":"pong"}` + "\n"

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only); port 0 picks a free port")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}

// run listens on addr, prints the real address on stdout for the caller to
// read, and serves until the process is killed.
func run(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	fmt.Println(ln.Addr().String())
	srv := &http.Server{Handler: http.HandlerFunc(servePong), ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// servePong answers every request alike: the same headers a JSON API sets.
func servePong(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, pong)
}
