package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// withCAHint explains a failed certificate verification: a sandbox started
// with --tls has a certificate from its own local CA, which no system
// trusts, so the subcommand needs that CA with --ca.
func (t *target) withCAHint(err error) error {
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	switch {
	case !errors.As(err, &verify) && !errors.As(err, &unknown) && !errors.As(err, &host):
		return err
	case t.ca == "":
		return fmt.Errorf("%w\nthe sandbox's certificate is not trusted: pass its CA with --ca: the ca.pem its ready line names (ca_cert), e.g. --ca ./tls/ca.pem for serve --tls --tls-dir ./tls, or download it from %s (served over plain HTTP too)", err, strings.Replace(t.endpoint("/__sandbox/ca.pem"), "https://", "http://", 1))
	}
	return fmt.Errorf("%w\nthe CA in --ca %s did not sign the sandbox's certificate: give the ca.pem of this sandbox's --tls-dir (a sandbox started without --tls-dir makes a new CA each time), and a --url host the certificate names (localhost, 127.0.0.1, ::1 or a --tls-host name)", err, t.ca)
}
