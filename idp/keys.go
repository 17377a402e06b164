package idp

import (
	"crypto/rsa"
	"fmt"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

// Keys is the signing key and the public key set published as the JWKS.
type Keys struct {
	// signing is the raw key, precomputed once: signing with a jwk.Key
	// would convert and re-check it on every token.
	signing *rsa.PrivateKey
	public  jwk.Set
	kid     string
	// x5t is the signing certificate's thumbprint, which v1.0 tokens
	// carry in their header.
	x5t string
}

// LoadKeys parses an RSA private key in PEM form (PKCS#1 or PKCS#8; text
// before the PEM block, such as a warning label, is ignored). Its key id is
// the RFC 7638 thumbprint, so the same key always has the same kid.
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
	der, err := signingCertificate(&raw)
	if err != nil {
		return nil, err
	}
	x5t, err := addCertificate(pub, der)
	if err != nil {
		return nil, err
	}
	set := jwk.NewSet()
	if err := set.AddKey(pub); err != nil {
		return nil, fmt.Errorf("build key set: %w", err)
	}
	raw.Precompute()
	return &Keys{signing: &raw, public: set, kid: key.KeyID(), x5t: x5t}, nil
}

// KeyID is the kid of the signing key, as tokens carry it in their header.
func (k *Keys) KeyID() string { return k.kid }

// PublicSet is the JWKS served at /{tenant}/discovery/v2.0/keys.
func (k *Keys) PublicSet() jwk.Set { return k.public }
