package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// maxHealthFileBytes bounds what healthcheck reads: the file is a few
// hundred bytes, anything bigger is not serve's.
const maxHealthFileBytes = 64 << 10

// healthFile is what serve records once it listens, when --health-file is
// set: where its health endpoint answers and how to trust it. healthcheck
// reads it before anything else, so that `docker run IMAGE --tls` (flags
// rather than SANDBOX_* variables, which healthcheck cannot see) is still
// checked over HTTPS with the CA serve actually used.
type healthFile struct {
	// URL is the root URL on the address serve listens on, as a client on
	// the same host reaches it (a wildcard address becomes 127.0.0.1).
	URL string `json:"url"`
	// CA is the ca.pem serve wrote for --tls; empty without TLS or with
	// --tls-cert.
	CA string `json:"ca,omitempty"`
	// SkipVerify is set when serve presents its own --tls-cert: the CA is
	// unknown, and the check only asks the loopback address "are you up?".
	SkipVerify bool `json:"skipVerify,omitempty"`
}

// newHealthFile describes the listener serve opened for in.
func newHealthFile(in *sandbox.Instance, addr *net.TCPAddr) healthFile {
	if !in.HTTPSOnly {
		return healthFile{URL: "http://" + advertisedHost(addr)}
	}
	return healthFile{URL: "https://" + advertisedHost(addr), CA: in.CAPath, SkipVerify: in.CAPath == ""}
}

// recordHealth writes the health file at path (nothing when path is
// empty) and returns what removes it when serve stops: a check after a
// clean stop then finds no file instead of trusting a closed port.
func recordHealth(path string, in *sandbox.Instance, addr *net.TCPAddr) (remove func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	if err := writeHealthFile(path, newHealthFile(in, addr)); err != nil {
		return nil, err
	}
	return func() { _ = os.Remove(path) }, nil
}

// writeHealthFile writes hf to path through a temporary file and a rename,
// so that a health check running at that moment never reads half a file.
func writeHealthFile(path string, hf healthFile) error {
	data, err := json.Marshal(hf)
	if err != nil {
		return fmt.Errorf("health file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".health-*.tmp")
	if err != nil {
		return fmt.Errorf("health file: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("health file %s: %w", path, err)
	}
	// Readable by any user: `docker exec -u` may run the check as another
	// user than serve.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("health file %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("health file %s: %w", path, err)
	}
	return nil
}

// readHealthFile reads what serve recorded at path. found is false when
// there is no file (serve has not started yet, or runs without
// --health-file); a file that is there but unreadable is an error.
func readHealthFile(path string) (hf healthFile, found bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return healthFile{}, false, nil
	}
	if err != nil {
		return healthFile{}, false, fmt.Errorf("health file: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, maxHealthFileBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&hf); err != nil {
		return healthFile{}, true, fmt.Errorf("health file %s is not serve's: %w", path, err)
	}
	if hf.URL == "" {
		return healthFile{}, true, fmt.Errorf("health file %s names no URL", path)
	}
	return hf, true, nil
}
