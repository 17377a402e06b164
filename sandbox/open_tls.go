package sandbox

import (
	"crypto/tls"
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

// setUpKeptCA serves HTTPS beside plain HTTP with a certificate from the CA
// kept in opts.CADir, made on the first start and reused after, so that a
// client's trust in it, set up once, lasts.
func (in *Instance) setUpKeptCA(opts Config) error {
	kept, err := tlsca.LoadOrCreate(opts.CADir, opts.TLSHosts, opts.Clock.Now())
	switch {
	case err != nil && opts.CADirOptional:
		if opts.Logger != nil {
			opts.Logger.Warn("serving plain HTTP only: the local CA for HTTPS cannot be kept (give a writable directory with --ca-dir, or start with --tls)", "err", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("local CA for HTTPS (--ca-dir %s): %w", opts.CADir, err)
	}
	in.TLS = &tls.Config{Certificates: []tls.Certificate{kept.Server}, MinVersion: tls.VersionTLS12}
	in.CACertPEM, in.CAPath, in.CACreated = kept.CertPEM, kept.CAPath, kept.Created
	return nil
}
