package idp

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
)

// objectNamespace derives stable object ids (oid, sub) from client ids, so a
// client keeps the same oid across restarts, as an app registration does.
var objectNamespace = uuid.MustParse("7d3f8a52-1c4b-4f0e-9a6d-2b8e5c1f0a93")

// The sandbox's own claims, beside Entra's: the environment the sandbox
// runs as and the instance of the client (fixtures.Client.Instance), so a
// token is refused by a sandbox of another environment and once its client
// has been deleted, whatever client of the same id exists later.
const (
	claimEnvironment = "sandbox_env"
	claimInstance    = "sandbox_client"
)

// Issued is an access token and what the token response says of it.
type Issued struct {
	AccessToken string
	ExpiresIn   int
	TokenID     string
	ExpiresAt   time.Time
}

// issue signs an Entra v2.0 app-only access token for client and resource.
func (p *Provider) issue(client fixtures.Client, resource, issuer string) (Issued, error) {
	lifetime := personaLifetime(client.ClientID, p.cfg.TokenLifetime)
	if client.TokenLifetimeSeconds > 0 {
		lifetime = time.Duration(client.TokenLifetimeSeconds) * time.Second
	}
	now := p.now(client.ClientID).Truncate(time.Second)
	uti, err := newUTI()
	if err != nil {
		return Issued{}, err
	}
	oid := uuid.NewSHA1(objectNamespace, []byte(client.ClientID)).String()
	roles := client.Roles
	if roles == nil {
		roles = []string{}
	}
	tok, err := jwt.NewBuilder().
		Audience([]string{resource}).
		Issuer(issuer).
		IssuedAt(now).
		NotBefore(now).
		Expiration(now.Add(lifetime)).
		Subject(oid).
		Claim("azp", client.ClientID).
		Claim("azpacr", "1").
		Claim("oid", oid).
		Claim("tid", p.cfg.Tenant).
		Claim("roles", roles).
		Claim("ver", "2.0").
		Claim("uti", uti).
		Claim("idtyp", "app").
		Claim(claimEnvironment, p.cfg.Environment).
		Claim(claimInstance, instanceOf(client)).
		Build()
	if err != nil {
		return Issued{}, fmt.Errorf("build token: %w", err)
	}
	tok.Options().Enable(jwt.FlattenAudience) // Entra writes aud as a string
	headers := jws.NewHeaders()
	if err := headers.Set(jws.TypeKey, "JWT"); err != nil {
		return Issued{}, fmt.Errorf("set typ: %w", err)
	}
	if err := headers.Set(jws.KeyIDKey, p.cfg.Keys.kid); err != nil {
		return Issued{}, fmt.Errorf("set kid: %w", err)
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256, p.cfg.Keys.signing, jws.WithProtectedHeaders(headers)))
	if err != nil {
		return Issued{}, fmt.Errorf("sign token: %w", err)
	}
	p.issued.record(now)
	return Issued{AccessToken: string(signed), ExpiresIn: int(lifetime / time.Second), TokenID: uti, ExpiresAt: now.Add(lifetime)}, nil
}

// newUTI returns a token identifier shaped like Entra's: 16 random bytes,
// base64url without padding.
func newUTI() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
