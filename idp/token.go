package idp

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// objectNamespace derives stable object ids (oid, sub) from client ids, so a
// client keeps the same oid across restarts, as an app registration does.
var objectNamespace = uuid.MustParse("7d3f8a52-1c4b-4f0e-9a6d-2b8e5c1f0a93")

// The sandbox's own claims, beside Entra's: the environment the sandbox
// runs as and the instance of the client (referrals.Client.Instance), so a
// token is refused by a sandbox of another environment and once its client
// has been deleted, whatever client of the same id exists later.
const (
	claimEnvironment = "sandbox_env"
	claimInstance    = "sandbox_client"
)

// accessClaims are a v2.0 access token's claims, in the order Entra's
// documentation lists a v2.0 app-only token's, then the sandbox's own
// (claimEnvironment and claimInstance, which validate.go reads). They are
// encoded straight from this struct and signed with jws.Sign, rather than
// built in jwx's jwt.Builder and serialized from its generic claim map,
// which allocates per claim: the signature is what a token should cost,
// and little else. Like Entra, a claim without a value is left out
// (no "roles": []).
type accessClaims struct {
	Audience    string   `json:"aud"`
	Issuer      string   `json:"iss"`
	IssuedAt    int64    `json:"iat"`
	NotBefore   int64    `json:"nbf"`
	Expiration  int64    `json:"exp"`
	AZP         string   `json:"azp"`
	AZPACR      string   `json:"azpacr"`
	ObjectID    string   `json:"oid"`
	Subject     string   `json:"sub"`
	TenantID    string   `json:"tid"`
	Roles       []string `json:"roles,omitempty"`
	Version     string   `json:"ver"`
	TokenID     string   `json:"uti"`
	IDType      string   `json:"idtyp"`
	Environment string   `json:"sandbox_env"`
	Instance    string   `json:"sandbox_client"`
}

// accessClaimsV1 are a v1.0 app-only access token's claims, as Entra's
// documentation lists them: appid and appidacr where v2.0 has azp and
// azpacr, then the sandbox's own.
type accessClaimsV1 struct {
	Audience    string   `json:"aud"`
	Issuer      string   `json:"iss"`
	IssuedAt    int64    `json:"iat"`
	NotBefore   int64    `json:"nbf"`
	Expiration  int64    `json:"exp"`
	AppID       string   `json:"appid"`
	AppIDACR    string   `json:"appidacr"`
	IDType      string   `json:"idtyp"`
	ObjectID    string   `json:"oid"`
	Roles       []string `json:"roles,omitempty"`
	Subject     string   `json:"sub"`
	TenantID    string   `json:"tid"`
	TokenID     string   `json:"uti"`
	Version     string   `json:"ver"`
	Environment string   `json:"sandbox_env"`
	Instance    string   `json:"sandbox_client"`
}

// Issued is an access token and what the token response says of it.
type Issued struct {
	AccessToken string
	ExpiresIn   int
	TokenID     string
	ExpiresAt   time.Time
}

// issue signs an Entra app-only access token, in the provider's format,
// for client and resource.
func (p *Provider) issue(client referrals.Client, resource requestedResource, issuer string) (Issued, error) {
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
	payload, err := p.encodeClaims(client, resource, issuer, oid, uti, now, now.Add(lifetime))
	if err != nil {
		return Issued{}, fmt.Errorf("encode claims: %w", err)
	}
	headers := jws.NewHeaders()
	if err := headers.Set(jws.TypeKey, "JWT"); err != nil {
		return Issued{}, fmt.Errorf("set typ: %w", err)
	}
	if p.cfg.TokenVersion == TokenV1 {
		// A legacy header of v1.0 tokens only: the same key as kid, by its
		// certificate's thumbprint (access-token-claims-reference.md).
		x5t, err := p.cfg.Keys.certThumbprint()
		if err != nil {
			return Issued{}, err
		}
		if err := headers.Set(jws.X509CertThumbprintKey, x5t); err != nil {
			return Issued{}, fmt.Errorf("set x5t: %w", err)
		}
	}
	if err := headers.Set(jws.KeyIDKey, p.cfg.Keys.kid); err != nil {
		return Issued{}, fmt.Errorf("set kid: %w", err)
	}
	signed, err := jws.Sign(payload, jws.WithKey(jwa.RS256, p.cfg.Keys.signing, jws.WithProtectedHeaders(headers)))
	if err != nil {
		return Issued{}, fmt.Errorf("sign token: %w", err)
	}
	p.issued.record(now)
	return Issued{AccessToken: string(signed), ExpiresIn: int(lifetime / time.Second), TokenID: uti, ExpiresAt: now.Add(lifetime)}, nil
}

// encodeClaims writes the claims of a token in the provider's format. A v2.0
// token's aud is the API's application id; a v1.0 token's is the resource
// as the scope named it (App ID URI or application id), as Entra writes them.
func (p *Provider) encodeClaims(client referrals.Client, resource requestedResource, issuer, oid, uti string, now, exp time.Time) ([]byte, error) {
	if p.cfg.TokenVersion == TokenV1 {
		return json.Marshal(accessClaimsV1{
			Audience: resource.named, Issuer: issuer, IssuedAt: now.Unix(), NotBefore: now.Unix(), Expiration: exp.Unix(),
			AppID: client.ClientID, AppIDACR: "1", IDType: "app", ObjectID: oid, Roles: client.Roles,
			Subject: oid, TenantID: p.cfg.Tenant, TokenID: uti, Version: TokenV1.String(),
			Environment: p.cfg.Environment, Instance: instanceOf(client),
		})
	}
	return json.Marshal(accessClaims{
		Audience:    ApplicationID(resource.appIDURI), // Entra writes aud as a string
		Issuer:      issuer,
		IssuedAt:    now.Unix(),
		NotBefore:   now.Unix(),
		Expiration:  exp.Unix(),
		AZP:         client.ClientID,
		AZPACR:      "1",
		ObjectID:    oid,
		Subject:     oid,
		TenantID:    p.cfg.Tenant,
		Roles:       client.Roles,
		Version:     TokenV2.String(),
		TokenID:     uti,
		IDType:      "app",
		Environment: p.cfg.Environment,
		Instance:    instanceOf(client),
	})
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
