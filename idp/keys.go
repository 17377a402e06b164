package idp

import (
	"crypto/rsa"
	"fmt"
	"sync"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

// Keys is the signing key and the public key set published as the JWKS.
type Keys struct {
	// signing is the raw key, precomputed once: signing with a jwk.Key
	// would convert and re-check it on every token.
	signing *rsa.PrivateKey
	kid     string
	// published is built when first asked: the self-signed certificate it
	// needs costs an RSA signature, which only the JWKS and v1.0 tokens
	// use, so a start does not pay it before the first request.
	published func() (published, error)
}

// published is what the signing certificate adds to the key: the JWKS,
// whose key carries x5c and x5t, and x5t, which v1.0 tokens carry in
// their header.
type published struct {
	set jwk.Set
	x5t string
}

// LoadKeys parses an RSA private key in PEM form (PKCS#1 or PKCS#8; text
// before the PEM block, such as a warning label, is ignored). Its key id is
// the RFC 7638 thumbprint, so the same key always has the same kid. Every
// check of the key is made here; its certificate is made when the JWKS or
// a v1.0 token first needs it.
func LoadKeys(pemBytes []byte) (*Keys, error) {
	key, err := jwk.ParseKey(pemBytes, jwk.WithPEM(true))
	if err != nil {
		return nil, fmt.Errorf("parse signing key: %w", err)
	}
	var raw rsa.PrivateKey
	if err := key.Raw(&raw); err != nil {
		return nil, fmt.Errorf("signing key must be an RSA private key: %w", err)
	}
	if raw.N.BitLen() < 2048 {
		return nil, fmt.Errorf("signing key is %d bits; RS256 needs at least 2048", raw.N.BitLen())
	}
	if err := jwk.AssignKeyID(key); err != nil {
		return nil, fmt.Errorf("assign key id: %w", err)
	}
	for name, value := range map[string]any{jwk.AlgorithmKey: jwa.RS256, jwk.KeyUsageKey: jwk.ForSignature} {
		if err := key.Set(name, value); err != nil {
			return nil, fmt.Errorf("set %s on signing key: %w", name, err)
		}
	}
	pub, err := key.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("derive public key: %w", err)
	}
	raw.Precompute()
	k := &Keys{signing: &raw, kid: key.KeyID()}
	k.published = sync.OnceValues(func() (published, error) { return publish(k.signing, pub) })
	return k, nil
}

// publish certifies the signing key and builds the JWKS of pub, its
// public key, which it changes: only the once of Keys.published calls it.
func publish(signing *rsa.PrivateKey, pub jwk.Key) (published, error) {
	der, err := signingCertificate(signing)
	if err != nil {
		return published{}, err
	}
	x5t, err := addCertificate(pub, der)
	if err != nil {
		return published{}, err
	}
	set := jwk.NewSet()
	if err := set.AddKey(pub); err != nil {
		return published{}, fmt.Errorf("build key set: %w", err)
	}
	return published{set: set, x5t: x5t}, nil
}

// KeyID is the kid of the signing key, as tokens carry it in their header.
func (k *Keys) KeyID() string { return k.kid }

// PublicSet is the JWKS served at /{tenant}/discovery/v2.0/keys.
func (k *Keys) PublicSet() (jwk.Set, error) {
	p, err := k.published()
	return p.set, err
}

// certThumbprint is x5t, the signing certificate's thumbprint.
func (k *Keys) certThumbprint() (string, error) {
	p, err := k.published()
	return p.x5t, err
}
