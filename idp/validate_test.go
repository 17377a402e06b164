package idp_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// issuedExpiry is when a token issued at fixedTime with the default
// lifetime expires.
func issuedExpiry() time.Time { return fixedTime().Truncate(time.Second).Add(idp.DefaultTokenLifetime) }

// withPayload replaces the payload of a compact token, keeping its header
// and signature.
func withPayload(t *testing.T, raw string, change func(map[string]any)) string {
	t.Helper()
	parts := strings.Split(raw, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("payload: %v", err)
	}
	var claims map[string]any
	mustJSON(t, b, &claims)
	change(claims)
	nb, err := json.Marshal(claims)
	if err != nil {
		t.Fatalf("marshal payload: %v", err)
	}
	parts[1] = base64.RawURLEncoding.EncodeToString(nb)
	return strings.Join(parts, ".")
}

// publicKeyPEM is the sandbox's public key as PEM, the secret of the
// classic RS256-to-HS256 confusion attack.
func publicKeyPEM(t *testing.T) []byte {
	t.Helper()
	var priv rsa.PrivateKey
	if err := sandboxKey(t, "").Raw(&priv); err != nil {
		t.Fatalf("raw key: %v", err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatalf("marshal public key: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// strangerKey is an RSA key that is not the sandbox's, named by kid.
func strangerKey(t *testing.T, kid string) jwk.Key {
	t.Helper()
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("generate key: %v", err)
	}
	key, err := jwk.FromRaw(priv)
	if err != nil {
		t.Fatalf("jwk: %v", err)
	}
	if err := key.Set(jwk.KeyIDKey, kid); err != nil {
		t.Fatalf("set kid: %v", err)
	}
	return key
}

// forgeryBug is the defect the JSON-serialization rows of TestValidate
// document; see the report of the idp test suite.
const forgeryBug = "validate.go checkHeader/jwt.ParseString accept JWS JSON serialization: jwx verifies the embedded " +
	"signature but reads the claims from the outer JSON object, so any sandbox token can be rewrapped with any azp, roles, aud, iss " +
	"and exp; fix: jws.Parse([]byte(raw), jws.WithCompact()) in checkHeader"

// jsonString marshals v.
func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	type build func(t *testing.T, s *sandbox) string
	issued := func(t *testing.T, s *sandbox) string { return s.fetchToken(t, partnerID, partnerSecret, defaultScope) }
	byHand := func(change func(map[string]any)) build {
		return func(t *testing.T, s *sandbox) string {
			claims := s.handClaims()
			change(claims)
			return signJWS(t, jwa.RS256, sandboxKey(t, s.keys.KeyID()), claims, map[string]any{"typ": "JWT"})
		}
	}
	header := func(h string) string { return base64.RawURLEncoding.EncodeToString([]byte(h)) }
	tests := []struct {
		name string
		make build
		// at moves the sandbox clock before Validate; nil leaves it.
		at         func(s *sandbox)
		expect     func(s *sandbox) idp.Expectation // nil: the referrals API's
		wantReason idp.Reason                       // "": valid
		// bug, when set, names a known defect: a row that gets a token
		// accepted is skipped with it instead of failing.
		bug string
	}{
		{name: "issued token", make: issued},
		{name: "signed by hand with the sandbox key", make: byHand(func(map[string]any) {})},
		{name: "aud as an array holding the API", make: byHand(func(c map[string]any) { c["aud"] = []string{"api://x", idp.DefaultResource} })},
		{name: "missing", make: func(*testing.T, *sandbox) string { return "" }, wantReason: idp.ReasonMissing},
		{name: "garbage", make: func(*testing.T, *sandbox) string { return "not a token" }, wantReason: idp.ReasonMalformed},
		{name: "three dots of garbage", make: func(*testing.T, *sandbox) string { return "a.b.c" }, wantReason: idp.ReasonMalformed},
		{name: "alg none", make: func(t *testing.T, s *sandbox) string {
			parts := strings.Split(issued(t, s), ".")
			return header(`{"alg":"none","typ":"JWT","kid":"`+s.keys.KeyID()+`"}`) + "." + parts[1] + "."
		}, wantReason: idp.ReasonAlgorithm},
		{name: "alg none keeping the RS256 signature", make: func(t *testing.T, s *sandbox) string {
			parts := strings.Split(issued(t, s), ".")
			return header(`{"alg":"none","typ":"JWT","kid":"`+s.keys.KeyID()+`"}`) + "." + parts[1] + "." + parts[2]
		}, wantReason: idp.ReasonAlgorithm},
		{name: "HS256 keyed with the public key PEM", make: func(t *testing.T, s *sandbox) string {
			return signJWS(t, jwa.HS256, publicKeyPEM(t), s.handClaims(), map[string]any{"kid": s.keys.KeyID(), "typ": "JWT"})
		}, wantReason: idp.ReasonAlgorithm},
		{name: "HS256 keyed with the JWKS modulus", make: func(t *testing.T, s *sandbox) string {
			var priv rsa.PrivateKey
			if err := sandboxKey(t, "").Raw(&priv); err != nil {
				t.Fatal(err)
			}
			return signJWS(t, jwa.HS256, priv.N.Bytes(), s.handClaims(), map[string]any{"kid": s.keys.KeyID()})
		}, wantReason: idp.ReasonAlgorithm},
		{name: "RS512 with the sandbox key", make: func(t *testing.T, s *sandbox) string {
			return signJWS(t, jwa.RS512, sandboxKey(t, s.keys.KeyID()), s.handClaims(), nil)
		}, wantReason: idp.ReasonAlgorithm},
		{name: "another RSA key under the sandbox kid", make: func(t *testing.T, s *sandbox) string {
			return signJWS(t, jwa.RS256, strangerKey(t, s.keys.KeyID()), s.handClaims(), nil)
		}, wantReason: idp.ReasonSignature},
		{name: "unknown kid", make: func(t *testing.T, s *sandbox) string {
			return signJWS(t, jwa.RS256, sandboxKey(t, "not-a-sandbox-kid"), s.handClaims(), nil)
		}, wantReason: idp.ReasonUnknownKey},
		{name: "no kid", make: func(t *testing.T, s *sandbox) string {
			return signJWS(t, jwa.RS256, sandboxKey(t, ""), s.handClaims(), nil)
		}, wantReason: idp.ReasonUnknownKey},
		{name: "payload modified (a role added)", make: func(t *testing.T, s *sandbox) string {
			return withPayload(t, issued(t, s), func(c map[string]any) { c["roles"] = append(c["roles"].([]any), "Admin") })
		}, wantReason: idp.ReasonSignature},
		{name: "payload modified (exp pushed out)", make: func(t *testing.T, s *sandbox) string {
			return withPayload(t, issued(t, s), func(c map[string]any) { c["exp"] = c["exp"].(float64) + 86400 })
		}, wantReason: idp.ReasonSignature},
		{name: "signature truncated (still base64url)", make: func(t *testing.T, s *sandbox) string {
			raw := issued(t, s)
			dot := strings.LastIndex(raw, ".")
			sig, err := base64.RawURLEncoding.DecodeString(raw[dot+1:])
			if err != nil {
				t.Fatal(err)
			}
			return raw[:dot+1] + base64.RawURLEncoding.EncodeToString(sig[:len(sig)-6])
		}, wantReason: idp.ReasonSignature},
		{name: "signature cut off", make: func(t *testing.T, s *sandbox) string {
			raw := issued(t, s)
			return raw[:strings.LastIndex(raw, ".")]
		}, wantReason: idp.ReasonMalformed},
		{name: "truncated in the payload", make: func(t *testing.T, s *sandbox) string {
			raw := issued(t, s)
			return raw[:strings.Index(raw, ".")+20]
		}, wantReason: idp.ReasonMalformed},
		{name: "one second past exp (no leeway by default)", make: issued,
			at: func(s *sandbox) { s.clock.Set(issuedExpiry().Add(time.Second)) }, wantReason: idp.ReasonExpired},
		{name: "at exp", make: issued,
			at: func(s *sandbox) { s.clock.Set(issuedExpiry()) }},
		{name: "expired a day ago", make: issued,
			at: func(s *sandbox) { s.clock.Advance(25 * time.Hour) }, wantReason: idp.ReasonExpired},
		{name: "nbf in the future, never issued", make: byHand(func(c map[string]any) {
			c["nbf"] = fixedTime().Add(2 * time.Second).Unix()
		}), wantReason: idp.ReasonNotYetValid},
		{name: "nbf now", make: byHand(func(c map[string]any) {
			c["nbf"] = fixedTime().Truncate(time.Second).Unix()
		})},
		// The sandbox issued it; moving its clock back does not strand the
		// client that caches it (timing.go).
		{name: "issued token with the clock moved back before nbf", make: issued,
			at: func(s *sandbox) { s.clock.Advance(-time.Hour) }},
		{name: "token for another API (sandbox-other-api)", make: func(t *testing.T, s *sandbox) string {
			return s.fetchToken(t, otherAPIID, otherAPISecret, otherAPIScope)
		}, wantReason: idp.ReasonWrongAudience},
		{name: "aud of another API signed by hand", make: byHand(func(c map[string]any) { c["aud"] = "api://other-api" }),
			wantReason: idp.ReasonWrongAudience},
		{name: "no aud", make: byHand(func(c map[string]any) { delete(c, "aud") }), wantReason: idp.ReasonWrongAudience},
		{name: "v2.0 aud: the API's application id", make: byHand(func(c map[string]any) { c["aud"] = idp.ApplicationID(idp.DefaultResource) })},
		{name: "v2.0 aud of another API", make: byHand(func(c map[string]any) { c["aud"] = idp.ApplicationID("api://other-api") }),
			wantReason: idp.ReasonWrongAudience},
		{name: "v1.0 token signed by hand (appid, the sts-shaped issuer)", make: byHand(func(c map[string]any) {
			c["appid"], c["appidacr"], c["ver"] = c["azp"], "1", "1.0"
			delete(c, "azp")
			delete(c, "azpacr")
			c["iss"] = strings.TrimSuffix(c["iss"].(string), "v2.0")
		}), expect: func(s *sandbox) idp.Expectation {
			want := s.expectation()
			want.AcceptIssuer = s.provider.OwnIssuer // as the API asks
			return want
		}},
		{name: "Entra's issuer signed by hand", make: byHand(func(c map[string]any) {
			c["iss"] = "https://login.microsoftonline.com/" + idp.DefaultTenant + "/v2.0"
		}), wantReason: idp.ReasonWrongIssuer},
		{name: "issued token, the API expects another issuer", make: issued,
			expect: func(s *sandbox) idp.Expectation {
				return idp.Expectation{Audience: idp.DefaultResource, Issuers: []string{"http://elsewhere/" + idp.DefaultTenant + "/v2.0"}}
			}, wantReason: idp.ReasonWrongIssuer},
		{name: "issued token, the API expects another audience", make: issued,
			expect: func(s *sandbox) idp.Expectation {
				return idp.Expectation{Audience: "api://other-api", Issuers: []string{issuer(s.server.URL)}}
			}, wantReason: idp.ReasonWrongAudience},
		{name: "JSON serialization of a noroles token with forged claims beside it", make: func(t *testing.T, s *sandbox) string {
			parts := strings.Split(s.fetchToken(t, "sandbox-noroles", "sandbox-noroles-secret", defaultScope), ".")
			return jsonString(t, map[string]any{
				"protected": parts[0], "payload": parts[1], "signature": parts[2],
				"aud": idp.DefaultResource, "iss": issuer(s.server.URL), "azp": partnerID, "exp": 4102444800, "roles": []string{"Referrals.Write"},
			})
		}, wantReason: idp.ReasonMalformed, bug: forgeryBug},
		{name: "general JSON serialization of a valid token", make: func(t *testing.T, s *sandbox) string {
			parts := strings.Split(issued(t, s), ".")
			return jsonString(t, map[string]any{"payload": parts[1], "signatures": []map[string]string{{"protected": parts[0], "signature": parts[2]}}})
		}, wantReason: idp.ReasonMalformed, bug: forgeryBug},
		{name: "no azp", make: byHand(func(c map[string]any) { delete(c, "azp") }), wantReason: idp.ReasonMalformed},
		{name: "no exp", make: byHand(func(c map[string]any) { delete(c, "exp") }), wantReason: idp.ReasonMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			raw := tc.make(t, s)
			if tc.at != nil {
				tc.at(s)
			}
			want := s.expectation()
			if tc.expect != nil {
				want = tc.expect(s)
			}
			p, err := s.provider.Validate(raw, want)
			if tc.bug != "" && err == nil {
				t.Fatalf("regression: %s (Validate accepted it as %s with roles %q)", tc.bug, p.ClientID, p.Roles)
			}
			if tc.wantReason == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if p.ClientID != partnerID || len(p.Roles) == 0 {
					t.Errorf("principal %+v, want %s with roles", p, partnerID)
				}
				return
			}
			var verr *idp.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("Validate error %v (%T), want *idp.ValidationError", err, err)
			}
			if verr.Reason != tc.wantReason {
				t.Errorf("reason %q (%v), want %q", verr.Reason, verr, tc.wantReason)
			}
			if got, ok := idp.IsValidationError(err); !ok || got != verr {
				t.Errorf("IsValidationError(%v) = %v, %v", err, got, ok)
			}
			if p.ClientID != "" || p.Roles != nil {
				t.Errorf("refused token still gave principal %+v", p)
			}
		})
	}
}

func TestValidateReturnsClientAndRoles(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, withClients(oddClient()))
	tests := []struct {
		id, secret string
		wantRoles  []string
	}{
		{partnerID, partnerSecret, []string{"Trials.Read", "Referrals.Read", "Referrals.Write", "QualifiedReferrals.Read", "QualifiedReferrals.Write"}},
		{"sandbox-readonly", "sandbox-readonly-secret", []string{"Trials.Read", "Referrals.Read", "QualifiedReferrals.Read"}},
		{"sandbox-noroles", "sandbox-noroles-secret", nil},
		{oddID, oddSecret, []string{"Trials.Read"}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			p, err := s.provider.Validate(s.fetchToken(t, tc.id, tc.secret, defaultScope), s.expectation())
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if p.ClientID != tc.id || !slices.Equal(p.Roles, tc.wantRoles) {
				t.Errorf("principal %q %q, want %q %q", p.ClientID, p.Roles, tc.id, tc.wantRoles)
			}
		})
	}
}

// TestValidateRechecksTimeOfACachedToken guards the validation cache: a
// token accepted once must still expire.
func TestValidateRechecksTimeOfACachedToken(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	raw := s.fetchToken(t, partnerID, partnerSecret, defaultScope)
	if _, err := s.provider.Validate(raw, s.expectation()); err != nil {
		t.Fatalf("first Validate: %v", err)
	}
	other := idp.Expectation{Audience: "api://other-api", Issuers: s.expectation().Issuers}
	if _, err := s.provider.Validate(raw, other); !isReason(err, idp.ReasonWrongAudience) {
		t.Errorf("cached token for another audience: %v, want %q", err, idp.ReasonWrongAudience)
	}
	s.clock.Set(issuedExpiry().Add(time.Second))
	if _, err := s.provider.Validate(raw, s.expectation()); !isReason(err, idp.ReasonExpired) {
		t.Errorf("cached token after expiry: %v, want %q", err, idp.ReasonExpired)
	}
}

func isReason(err error, want idp.Reason) bool {
	v, ok := idp.IsValidationError(err)
	return ok && v.Reason == want
}
