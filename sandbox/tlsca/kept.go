package tlsca

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// KeyFile is the name of the kept CA's key (with its certificate) in a CA
// directory; ca.pem beside it holds the certificate alone, for clients.
const KeyFile = "ca-key.pem"

// keptValidity is how long a kept CA lasts: it is trusted once per
// machine, so it must outlive many starts, as mkcert's CA does.
const keptValidity = 10 * 365 * 24 * time.Hour

// DefaultDir is where the sandbox keeps its CA unless told otherwise: the
// user's configuration directory (XDG_CONFIG_HOME or ~/.config on Linux,
// ~/Library/Application Support on macOS, %AppData% on Windows).
func DefaultDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the user's configuration directory for the local CA: %w", err)
	}
	return filepath.Join(dir, "referrals-sandbox"), nil
}

// Kept is the CA kept in a directory across starts, and the server
// certificate it issued for this start.
type Kept struct {
	*Authority
	// CAPath is the CA certificate clients trust (dir/ca.pem).
	CAPath string
	// Created is true when this start made the CA: clients do not trust
	// it yet.
	Created bool
}

// LoadOrCreate returns the CA kept in dir, creating it on first use, with
// a new server certificate for DefaultHosts plus extra. The CA is kept so
// that a client trusts it once: every start reuses it.
//
// dir is held to WriteCA's rules (a real directory of this user's, not
// writable by group or others), and the key file must be readable by this
// user alone. Several sandboxes starting at once agree on one CA: each
// writes its own candidate under a random name and links it into place,
// which only the first link does; the others read that one.
func LoadOrCreate(dir string, extra []string, now time.Time) (*Kept, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("CA directory: %w", err)
	}
	root, err := openPrivateDir(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	created := false
	c, err := readKept(root, dir)
	if errors.Is(err, fs.ErrNotExist) {
		c, created, err = createKept(root, dir, now)
	}
	if err != nil {
		return nil, err
	}
	if !now.Before(c.cert.NotAfter) {
		return nil, fmt.Errorf("the local CA in %s expired on %s: remove %s and %s there to make a new one, then trust it again",
			dir, c.cert.NotAfter.UTC().Format(time.DateOnly), KeyFile, CAFile)
	}
	if err := writeIfChanged(root, dir, CAFile, c.certPEM, 0o644); err != nil {
		return nil, err
	}
	auth, err := c.issue(extra, now)
	if err != nil {
		return nil, err
	}
	return &Kept{Authority: auth, CAPath: filepath.Join(dir, CAFile), Created: created}, nil
}

// readKept reads and checks dir/ca-key.pem.
func readKept(root *os.Root, dir string) (*ca, error) {
	fi, err := root.Lstat(KeyFile)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("CA key %s is not a regular file", filepath.Join(dir, KeyFile))
	}
	if err := checkKeyFile(filepath.Join(dir, KeyFile), fi); err != nil {
		return nil, err
	}
	data, err := root.ReadFile(KeyFile)
	if err != nil {
		return nil, fmt.Errorf("read the local CA: %w", err)
	}
	c, err := parseKept(data)
	if err != nil {
		return nil, fmt.Errorf("local CA %s: %w (remove it and %s to make a new one, then trust it again)", filepath.Join(dir, KeyFile), err, CAFile)
	}
	return c, nil
}

// parseKept reads a PKCS #8 key and the CA certificate it belongs to.
func parseKept(data []byte) (*ca, error) {
	c := &ca{}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		switch b.Type {
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse key: %w", err)
			}
			ek, ok := k.(*ecdsa.PrivateKey)
			if !ok {
				return nil, errors.New("the key is not an ECDSA key")
			}
			c.key = ek
		case "CERTIFICATE":
			cert, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse certificate: %w", err)
			}
			c.cert, c.der = cert, b.Bytes
			c.certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes})
		}
	}
	switch {
	case c.key == nil || c.cert == nil:
		return nil, errors.New("want a PRIVATE KEY and a CERTIFICATE block")
	case !c.cert.IsCA:
		return nil, errors.New("the certificate is not a CA's")
	case !c.key.PublicKey.Equal(c.cert.PublicKey):
		return nil, errors.New("the key does not match the certificate")
	}
	return c, nil
}

// createKept makes a CA and links it into place as dir/ca-key.pem, unless
// another sandbox got there first: then that one is returned.
func createKept(root *os.Root, dir string, now time.Time) (*ca, bool, error) {
	c, err := newCA(now, keptValidity)
	if err != nil {
		return nil, false, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(c.key)
	if err != nil {
		return nil, false, fmt.Errorf("tls ca: encode CA key: %w", err)
	}
	data := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), c.certPEM...)
	tmp, err := writeTemp(root, dir, KeyFile, data, 0o600)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = root.Remove(tmp) }()
	switch err := root.Link(tmp, KeyFile); {
	case errors.Is(err, fs.ErrExist):
		theirs, err := readKept(root, dir)
		return theirs, false, err
	case err != nil:
		return nil, false, fmt.Errorf("CA directory %s: keep the CA key: %w", dir, err)
	}
	return c, true, nil
}

// writeIfChanged makes dir/name hold data, through a new file renamed into
// place (a symbolic link planted at name is replaced, never followed).
func writeIfChanged(root *os.Root, dir, name string, data []byte, perm os.FileMode) error {
	if fi, err := root.Lstat(name); err == nil && fi.Mode().IsRegular() {
		if old, err := root.ReadFile(name); err == nil && bytes.Equal(old, data) {
			return nil
		}
	}
	tmp, err := writeTemp(root, dir, name, data, perm)
	if err != nil {
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("CA directory %s: write %s: %w", dir, name, err)
	}
	return nil
}

// writeTemp writes data to a new file with a random name beside name, so
// that sandboxes starting at once never share one, and returns its name.
func writeTemp(root *os.Root, dir, name string, data []byte, perm os.FileMode) (string, error) {
	var suffix [8]byte
	_, _ = rand.Read(suffix[:])
	tmp := "." + name + "." + hex.EncodeToString(suffix[:])
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", fmt.Errorf("CA directory %s: %w", dir, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		_ = root.Remove(tmp)
		return "", fmt.Errorf("CA directory %s: write %s: %w", dir, name, err)
	}
	return tmp, nil
}
