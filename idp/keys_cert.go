package idp

import (
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // x5t is defined as the SHA-1 thumbprint (RFC 7517 4.8); nothing is secured by it
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"math/big"
	"time"

	"github.com/lestrrat-go/jwx/v2/cert"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

// The signing certificate's validity: fixed, so that the same key always
// gives the same certificate, and so the same x5t, across restarts and
// instances (a client that pinned a thumbprint keeps working).
var (
	certNotBefore = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	certNotAfter  = time.Date(2035, 1, 1, 0, 0, 0, 0, time.UTC)
)

// signingCertificate is a self-signed certificate for the signing key, as
// Entra publishes each signing key with its certificate (x5c) and the
// certificate's SHA-1 thumbprint (x5t). It is built the same way every
// time: fixed names and dates, a serial number taken from the key, and an
// RSA PKCS #1 v1.5 signature, which is deterministic.
func signingCertificate(key *rsa.PrivateKey) ([]byte, error) {
	sum := sha256.Sum256(key.PublicKey.N.Bytes())
	serial := new(big.Int).SetBytes(sum[:16])
	name := pkix.Name{CommonName: "referrals-sandbox token signing"}
	template := &x509.Certificate{
		SerialNumber:       serial,
		Subject:            name,
		Issuer:             name,
		NotBefore:          certNotBefore,
		NotAfter:           certNotAfter,
		KeyUsage:           x509.KeyUsageDigitalSignature,
		SignatureAlgorithm: x509.SHA256WithRSA,
		SubjectKeyId:       sum[:20],
	}
	der, err := x509.CreateCertificate(nil, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("self-sign the signing key: %w", err)
	}
	return der, nil
}

// addCertificate puts the certificate der on the public key as Entra's keys
// carry it: x5c (standard base64 DER, RFC 7517 4.7) and x5t (base64url
// SHA-1 of the DER, RFC 7517 4.8), and returns x5t.
func addCertificate(pub jwk.Key, der []byte) (string, error) {
	var chain cert.Chain
	if err := chain.AddString(base64.StdEncoding.EncodeToString(der)); err != nil {
		return "", fmt.Errorf("x5c: %w", err)
	}
	if err := pub.Set(jwk.X509CertChainKey, &chain); err != nil {
		return "", fmt.Errorf("set x5c: %w", err)
	}
	thumb := sha1.Sum(der) //nolint:gosec // see the import
	x5t := base64.RawURLEncoding.EncodeToString(thumb[:])
	if err := pub.Set(jwk.X509CertThumbprintKey, x5t); err != nil {
		return "", fmt.Errorf("set x5t: %w", err)
	}
	return x5t, nil
}
