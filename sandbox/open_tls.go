package sandbox

import (
	"errors"
	"fmt"
	"os"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tlsca"
)

// writeCA writes the local CA's certificate to dir, or without dir to a new
// private directory of this instance: a fixed default shared by every
// sandbox on the machine let a second sandbox overwrite the first one's
// ca.pem, and let another user plant the directory first.
func (in *Instance) writeCA(ca *tlsca.Authority, dir string) error {
	flag := "--tls-dir: "
	if dir == "" {
		var err error
		if dir, err = tlsca.PrivateDir(); err != nil {
			return err
		}
		in.privateTLSDir, flag = dir, ""
	}
	path, err := ca.WriteCA(dir)
	if err != nil {
		return errors.Join(fmt.Errorf("%s%w", flag, err), in.removePrivateTLSDir())
	}
	in.CAPath = path
	return nil
}

// removePrivateTLSDir removes the directory writeCA created, if any. Nobody
// else can write in it (mode 0700), so everything in it is the sandbox's.
func (in *Instance) removePrivateTLSDir() error {
	if in.privateTLSDir == "" {
		return nil
	}
	dir := in.privateTLSDir
	in.privateTLSDir = ""
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove TLS directory: %w", err)
	}
	return nil
}
