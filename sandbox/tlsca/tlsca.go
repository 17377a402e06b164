// Package tlsca makes the sandbox's local certificate authority: a CA
// created at start-up (--tls), or one kept in a directory and reused
// across starts (LoadOrCreate, for HTTPS on the default port), and a
// server certificate it signs for localhost,
// 127.0.0.1, ::1 and any extra host names (a compose service name, or
// login.microsoftonline.com when CI routes that host to the sandbox). A
// client trusts the sandbox by trusting the CA certificate.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package tlsca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// validity is how long the certificates last; the CA is new every start.
const validity = 30 * 24 * time.Hour

// DefaultHosts are always in the server certificate.
func DefaultHosts() []string { return []string{"localhost", "127.0.0.1", "::1"} }

// Authority is a CA and the server certificate it issued.
type Authority struct {
	// CertPEM is the CA certificate clients trust.
	CertPEM []byte
	// Server is the certificate the sandbox serves.
	Server tls.Certificate
}

// New creates a CA and a server certificate for DefaultHosts plus extra,
// valid from a minute before now (clock skew between client and sandbox).
func New(extra []string, now time.Time) (*Authority, error) {
	ca, err := newCA(now, validity)
	if err != nil {
		return nil, err
	}
	return ca.issue(extra, now)
}

// ca is a CA certificate with its key.
type ca struct {
	cert    *x509.Certificate
	der     []byte
	key     *ecdsa.PrivateKey
	certPEM []byte
}

// newCA creates a CA valid from a minute before now for lifetime.
func newCA(now time.Time, lifetime time.Duration) (*ca, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tls ca: generate CA key: %w", err)
	}
	caSerial, err := serial()
	if err != nil {
		return nil, err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          caSerial,
		Subject:               pkix.Name{CommonName: "referrals-sandbox local CA (test only)", Organization: []string{"referrals-sandbox"}},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(lifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("tls ca: sign CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("tls ca: parse CA certificate: %w", err)
	}
	return &ca{cert: caCert, der: caDER, key: caKey, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}, nil
}

// issue signs a server certificate for DefaultHosts plus extra, valid from
// a minute before now for validity (or until the CA expires, if sooner).
func (c *ca) issue(extra []string, now time.Time) (*Authority, error) {
	serverKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tls ca: generate server key: %w", err)
	}
	serverSerial, err := serial()
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(validity)
	if c.cert.NotAfter.Before(notAfter) {
		notAfter = c.cert.NotAfter
	}
	serverTemplate := &x509.Certificate{
		SerialNumber: serverSerial,
		Subject:      pkix.Name{CommonName: "referrals-sandbox"},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range append(DefaultHosts(), extra...) {
		if ip := net.ParseIP(h); ip != nil {
			serverTemplate.IPAddresses = append(serverTemplate.IPAddresses, ip)
		} else if h != "" {
			serverTemplate.DNSNames = append(serverTemplate.DNSNames, h)
		}
	}
	serverDER, err := x509.CreateCertificate(rand.Reader, serverTemplate, c.cert, &serverKey.PublicKey, c.key)
	if err != nil {
		return nil, fmt.Errorf("tls ca: sign server certificate: %w", err)
	}
	return &Authority{
		CertPEM: c.certPEM,
		Server:  tls.Certificate{Certificate: [][]byte{serverDER, c.der}, PrivateKey: serverKey},
	}, nil
}

// Pool returns a certificate pool trusting only the CA.
func (a *Authority) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(a.CertPEM)
	return pool
}

// serial is a random 128-bit serial number, as RFC 5280 recommends.
func serial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("tls ca: serial number: %w", err)
	}
	return n, nil
}
