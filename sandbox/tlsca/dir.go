package tlsca

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CAFile is the name of the CA certificate in a TLS directory.
const CAFile = "ca.pem"

// PrivateDir creates a new directory, under the system's temporary
// directory, for one sandbox's TLS files. os.MkdirTemp gives it a name
// nobody can predict or create first, and mode 0700: two sandboxes never
// share it, and no other user can read or replace what is in it. The
// caller removes it when the sandbox stops.
func PrivateDir() (string, error) {
	dir, err := os.MkdirTemp("", "referrals-sandbox-tls-")
	if err != nil {
		return "", fmt.Errorf("create a private TLS directory: %w", err)
	}
	return dir, nil
}

// WriteCA writes the CA certificate to dir/ca.pem and returns the path.
//
// Whoever can write in dir can swap in a CA of their own, which clients are
// told to trust, so dir (created with mode 0700 if missing) must be a
// directory itself, not a symbolic link, owned by this user and not
// writable by group or others; anything else is refused. The checks are
// made on the opened directory, and the file is written through that same
// handle (os.Root), so the directory cannot be swapped between check and
// write. ca.pem is written to a new file and renamed into place: a symbolic
// link planted at ca.pem is replaced, never written through.
func (a *Authority) WriteCA(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("TLS directory: %w", err)
	}
	root, err := openPrivateDir(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	const tmp = "." + CAFile + ".new"
	// A leftover from a crash; Remove takes a symbolic link away itself.
	if err := root.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("TLS directory %s: remove %s: %w", dir, tmp, err)
	}
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("TLS directory %s: %w", dir, err)
	}
	_, err = f.Write(a.CertPEM)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err == nil {
		err = root.Rename(tmp, CAFile)
	}
	if err != nil {
		return "", fmt.Errorf("write CA certificate to %s: %w", dir, err)
	}
	return filepath.Join(dir, CAFile), nil
}

// openPrivateDir opens dir as an os.Root after checking that it is a real
// directory (not a symbolic link), owned by this user and not writable by
// group or others.
func openPrivateDir(dir string) (*os.Root, error) {
	named, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("TLS directory: %w", err)
	}
	if named.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("TLS directory %s is a symbolic link; give the directory it points to, if you trust it", dir)
	}
	if !named.IsDir() {
		return nil, fmt.Errorf("TLS directory %s is not a directory", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("TLS directory: %w", err)
	}
	opened, err := root.Stat(".")
	switch {
	case err != nil:
		err = fmt.Errorf("TLS directory %s: %w", dir, err)
	case !os.SameFile(named, opened):
		err = fmt.Errorf("TLS directory %s was replaced while it was being opened", dir)
	default:
		err = checkPrivate(dir, opened)
	}
	if err != nil {
		return nil, errors.Join(err, root.Close())
	}
	return root, nil
}
