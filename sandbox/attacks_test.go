package sandbox_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"github.com/referrals-sandbox/referrals-sandbox/fixtures"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// Token attacks: every forged, altered or out-of-date token is refused with
// 401 invalid_token, over HTTP, on an operation the genuine token may call.

// attackPath is the operation every attack is tried on: partner, readonly
// and the forged variants of their tokens would all be allowed to call it.
const attackPath = "/api/v1/referrals/trials"

// forgery is what an attacker has to work with: genuine tokens of the
// sandbox, its published keys, and (for the attacks that need a genuine
// key) the sandbox's signing key itself.
type forgery struct {
	t          *testing.T
	partnerJWT string         // a genuine token of sandbox-partner
	norolesJWT string         // a genuine token of sandbox-noroles (403 on attackPath)
	claims     map[string]any // the claims of partnerJWT
	kid        string         // the sandbox key's kid
	sandboxKey jwk.Key        // the sandbox's private signing key
	publicKey  *rsa.PublicKey // as published in the JWKS
	jwks       []byte         // the JWKS document as served
	otherKey   *rsa.PrivateKey
	now        time.Time
}

func newForgery(t *testing.T, s *testSandbox) *forgery {
	t.Helper()
	f := &forgery{t: t, partnerJWT: s.token(partner), norolesJWT: s.token(noroles), now: s.Clock.Now()}
	f.claims = testutil.JWTClaims(t, f.partnerJWT)

	keys, err := idp.LoadKeys(fixtures.DefaultSigningKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	f.kid = keys.KeyID()
	if f.sandboxKey, err = jwk.ParseKey(fixtures.DefaultSigningKeyPEM(), jwk.WithPEM(true)); err != nil {
		t.Fatal(err)
	}

	// The public key as an attacker gets it: from the JWKS endpoint.
	r := s.do(request{path: "/" + idp.DefaultTenant + "/discovery/v2.0/keys", plain: true})
	if r.Status != http.StatusOK {
		t.Fatalf("JWKS: %d %s", r.Status, r.Body)
	}
	f.jwks = r.Body
	set, err := jwk.Parse(r.Body)
	if err != nil {
		t.Fatalf("parse JWKS: %v", err)
	}
	published, ok := set.LookupKeyID(f.kid)
	if !ok {
		t.Fatalf("JWKS %s does not hold kid %s", r.Body, f.kid)
	}
	f.publicKey = &rsa.PublicKey{}
	if err := published.Raw(f.publicKey); err != nil {
		t.Fatal(err)
	}
	if f.otherKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	return f
}

// with returns a copy of the genuine claims with changes applied; a nil
// value deletes the claim.
func (f *forgery) with(changes map[string]any) map[string]any {
	c := maps.Clone(f.claims)
	for k, v := range changes {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// sign builds a JWT of claims with jwt.NewBuilder and signs it with key
// under alg; header members (kid, jwk, jku...) are set as given.
func (f *forgery) sign(claims map[string]any, alg jwa.SignatureAlgorithm, key any, header map[string]any) string {
	f.t.Helper()
	b := jwt.NewBuilder()
	for k, v := range claims {
		b = b.Claim(k, v)
	}
	tok, err := b.Build()
	if err != nil {
		f.t.Fatalf("build claims %v: %v", claims, err)
	}
	h := jws.NewHeaders()
	for k, v := range header {
		if err := h.Set(k, v); err != nil {
			f.t.Fatalf("header %s: %v", k, err)
		}
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(alg, key, jws.WithProtectedHeaders(h)))
	if err != nil {
		f.t.Fatalf("sign with %s: %v", alg, err)
	}
	return string(signed)
}

// genuine signs claims exactly as the sandbox does: RS256, its key, its kid.
func (f *forgery) genuine(claims map[string]any) string {
	return f.sign(claims, jwa.RS256, f.sandboxKey, map[string]any{jws.KeyIDKey: f.kid, jws.TypeKey: "JWT"})
}

// unsigned assembles a compact JWS by hand: jwx will not sign with alg none.
func unsigned(header, claims map[string]any, signature string) string {
	return b64JSON(header) + "." + b64JSON(claims) + "." + signature
}

// signedByHand assembles header and claims exactly as given (jwx would
// drop an empty crit, and refuses to build absurd dates) and signs them
// with the sandbox key.
func (f *forgery) signedByHand(header, claims map[string]any) string {
	f.t.Helper()
	var key rsa.PrivateKey
	if err := f.sandboxKey.Raw(&key); err != nil {
		f.t.Fatal(err)
	}
	input := b64JSON(header) + "." + b64JSON(claims)
	digest := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, &key, crypto.SHA256, digest[:])
	if err != nil {
		f.t.Fatal(err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// sandboxHeader is the header the sandbox writes, plus extra members.
func (f *forgery) sandboxHeader(extra map[string]any) map[string]any {
	h := map[string]any{"alg": "RS256", "kid": f.kid, "typ": "JWT"}
	maps.Copy(h, extra)
	return h
}

// respelled re-encodes every segment of token with enc: the same bytes,
// another spelling.
func respelled(token string, enc *base64.Encoding) string {
	parts := strings.Split(token, ".")
	for i, p := range parts {
		b, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil {
			panic(err) // only genuine tokens are re-spelled
		}
		parts[i] = enc.EncodeToString(b)
	}
	return strings.Join(parts, ".")
}

func b64JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only ever maps of plain values built by the test
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// withPayload keeps token's header and signature and swaps in claims.
func withPayload(token string, claims map[string]any) string {
	parts := strings.Split(token, ".")
	return parts[0] + "." + b64JSON(claims) + "." + parts[2]
}

// jsonSerialization turns a compact token into the flattened (general=false)
// or general JWS JSON serialization, adding extra top-level members.
func jsonSerialization(token string, general bool, extra map[string]any) string {
	parts := strings.Split(token, ".")
	doc := map[string]any{"payload": parts[1]}
	if general {
		doc["signatures"] = []map[string]string{{"protected": parts[0], "signature": parts[2]}}
	} else {
		doc["protected"], doc["signature"] = parts[0], parts[2]
	}
	maps.Copy(doc, extra)
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

// attackCase is one forged token and the reasons its refusal may name.
type attackCase struct {
	name    string
	token   func(f *forgery) string
	reasons []idp.Reason
}

func tokenAttacks() []attackCase {
	hs256 := func(secret func(f *forgery) []byte) func(f *forgery) string {
		return func(f *forgery) string {
			return f.sign(f.claims, jwa.HS256, secret(f), map[string]any{jws.KeyIDKey: f.kid, jws.TypeKey: "JWT"})
		}
	}
	byOtherKey := func(header func(f *forgery) map[string]any) func(f *forgery) string {
		return func(f *forgery) string { return f.sign(f.claims, jwa.RS256, f.otherKey, header(f)) }
	}
	at := func(f *forgery, d time.Duration) float64 { return float64(f.now.Add(d).Unix()) }
	algorithm := []idp.Reason{idp.ReasonAlgorithm, idp.ReasonMalformed}
	truncated := []idp.Reason{idp.ReasonMalformed, idp.ReasonSignature}
	return []attackCase{
		{"alg none, sandbox kid, no signature", func(f *forgery) string {
			return unsigned(map[string]any{"alg": "none", "typ": "JWT", "kid": f.kid}, f.claims, "")
		}, algorithm},
		{"alg none, no kid", func(f *forgery) string {
			return unsigned(map[string]any{"alg": "none", "typ": "JWT"}, f.claims, "")
		}, algorithm},
		{"alg None, genuine signature kept", func(f *forgery) string {
			return unsigned(map[string]any{"alg": "None", "typ": "JWT", "kid": f.kid}, f.claims, strings.Split(f.partnerJWT, ".")[2])
		}, algorithm},
		{"HS256 keyed with the public key as PKIX PEM", hs256(func(f *forgery) []byte {
			der, err := x509.MarshalPKIXPublicKey(f.publicKey)
			if err != nil {
				f.t.Fatal(err)
			}
			return pemBlock("PUBLIC KEY", der)
		}), algorithm},
		{"HS256 keyed with the public key as PKCS#1 PEM", hs256(func(f *forgery) []byte {
			return pemBlock("RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(f.publicKey))
		}), algorithm},
		{"HS256 keyed with the JWK n bytes", hs256(func(f *forgery) []byte { return f.publicKey.N.Bytes() }), algorithm},
		{"HS256 keyed with the JWK n as published (base64url)", hs256(func(f *forgery) []byte {
			return []byte(base64.RawURLEncoding.EncodeToString(f.publicKey.N.Bytes()))
		}), algorithm},
		{"HS256 keyed with the JWKS document", hs256(func(f *forgery) []byte { return f.jwks }), algorithm},
		{"RS512 with the genuine key", func(f *forgery) string {
			return f.sign(f.claims, jwa.RS512, f.sandboxKey, map[string]any{jws.KeyIDKey: f.kid})
		}, algorithm},
		{"PS256 with the genuine key", func(f *forgery) string {
			return f.sign(f.claims, jwa.PS256, f.sandboxKey, map[string]any{jws.KeyIDKey: f.kid})
		}, algorithm},
		{"another RSA key under the sandbox kid", byOtherKey(func(f *forgery) map[string]any {
			return map[string]any{jws.KeyIDKey: f.kid}
		}), []idp.Reason{idp.ReasonSignature}},
		{"another RSA key embedded as jwk header", byOtherKey(func(f *forgery) map[string]any {
			pub, err := jwk.FromRaw(&f.otherKey.PublicKey)
			if err != nil {
				f.t.Fatal(err)
			}
			return map[string]any{jws.KeyIDKey: f.kid, jws.JWKKey: pub}
		}), []idp.Reason{idp.ReasonSignature}},
		{"another RSA key announced by jku", byOtherKey(func(f *forgery) map[string]any {
			return map[string]any{jws.KeyIDKey: f.kid, jws.JWKSetURLKey: "http://127.0.0.1:1/attacker/keys"}
		}), []idp.Reason{idp.ReasonSignature}},
		{"another RSA key under its own kid", byOtherKey(func(f *forgery) map[string]any {
			return map[string]any{jws.KeyIDKey: "attacker-key-1"}
		}), []idp.Reason{idp.ReasonUnknownKey}},
		{"genuine key, unknown kid", func(f *forgery) string {
			return f.sign(f.claims, jwa.RS256, f.sandboxKey, map[string]any{jws.KeyIDKey: "not-" + f.kid})
		}, []idp.Reason{idp.ReasonUnknownKey}},
		{"genuine key, no kid", func(f *forgery) string {
			return f.sign(f.claims, jwa.RS256, f.sandboxKey, nil)
		}, []idp.Reason{idp.ReasonUnknownKey}},
		// The kid is the one header value an attacker controls that the
		// refusal names: it must not put characters RFC 6750 forbids into
		// the challenge.
		{"unknown kid with non-ASCII characters", func(f *forgery) string {
			return f.sign(f.claims, jwa.RS256, f.sandboxKey, map[string]any{jws.KeyIDKey: "clé-ключ"})
		}, []idp.Reason{idp.ReasonUnknownKey}},
		{"unknown kid with control characters", func(f *forgery) string {
			return f.sign(f.claims, jwa.RS256, f.sandboxKey, map[string]any{jws.KeyIDKey: "k\x01\x7f\tid"})
		}, []idp.Reason{idp.ReasonUnknownKey}},
		{"unknown kid with quote, backslash and CRLF", func(f *forgery) string {
			return f.sign(f.claims, jwa.RS256, f.sandboxKey, map[string]any{jws.KeyIDKey: "a\"b\\c\r\nSet-Cookie: x=y"})
		}, []idp.Reason{idp.ReasonUnknownKey}},
		{"expired an hour ago", func(f *forgery) string {
			return f.genuine(f.with(map[string]any{"iat": at(f, -2*time.Hour), "nbf": at(f, -2*time.Hour), "exp": at(f, -time.Hour)}))
		}, []idp.Reason{idp.ReasonExpired}},
		{"no exp at all", func(f *forgery) string {
			return f.genuine(f.with(map[string]any{"exp": nil}))
		}, []idp.Reason{idp.ReasonMalformed}},
		{"nbf an hour ahead", func(f *forgery) string {
			return f.genuine(f.with(map[string]any{"nbf": at(f, time.Hour), "exp": at(f, 2*time.Hour)}))
		}, []idp.Reason{idp.ReasonNotYetValid}},
		{"wrong aud", func(f *forgery) string {
			return f.genuine(f.with(map[string]any{"aud": "api://other-api"}))
		}, []idp.Reason{idp.ReasonWrongAudience}},
		{"no aud", func(f *forgery) string {
			return f.genuine(f.with(map[string]any{"aud": nil}))
		}, []idp.Reason{idp.ReasonWrongAudience}},
		{"wrong iss: the real Entra", func(f *forgery) string {
			return f.genuine(f.with(map[string]any{"iss": "https://login.microsoftonline.com/" + idp.DefaultTenant + "/v2.0"}))
		}, []idp.Reason{idp.ReasonWrongIssuer}},
		{"wrong iss: another tenant on this host", func(f *forgery) string {
			iss := f.claims["iss"].(string)
			return f.genuine(f.with(map[string]any{"iss": strings.Replace(iss, idp.DefaultTenant, "00000000-0000-0000-0000-000000000000", 1)}))
		}, []idp.Reason{idp.ReasonWrongIssuer}},
		{"truncated by one character", func(f *forgery) string { return f.partnerJWT[:len(f.partnerJWT)-1] }, truncated},
		{"truncated to half", func(f *forgery) string { return f.partnerJWT[:len(f.partnerJWT)/2] }, truncated},
		{"signature cut off, dot kept", func(f *forgery) string {
			return f.partnerJWT[:strings.LastIndexByte(f.partnerJWT, '.')+1]
		}, truncated},
		{"signature cut off with its dot", func(f *forgery) string {
			return f.partnerJWT[:strings.LastIndexByte(f.partnerJWT, '.')]
		}, truncated},
		{"header only", func(f *forgery) string { return strings.Split(f.partnerJWT, ".")[0] }, truncated},
		{"payload grants a role, signature kept", func(f *forgery) string {
			c := testutil.JWTClaims(f.t, f.norolesJWT)
			c["roles"] = []string{sandbox.RoleTrialsRead, sandbox.RoleReferralsRead}
			return withPayload(f.norolesJWT, c)
		}, []idp.Reason{idp.ReasonSignature}},
		{"payload names another partner, signature kept", func(f *forgery) string {
			return withPayload(f.partnerJWT, f.with(map[string]any{"azp": partner2}))
		}, []idp.Reason{idp.ReasonSignature}},
		{"payload extends exp by a year, signature kept", func(f *forgery) string {
			return withPayload(f.partnerJWT, f.with(map[string]any{"exp": at(f, 365*24*time.Hour)}))
		}, []idp.Reason{idp.ReasonSignature}},
		{"crit header naming an extension", func(f *forgery) string {
			return f.signedByHand(f.sandboxHeader(map[string]any{"crit": []string{"exp"}, "exp": 1}), f.claims)
		}, []idp.Reason{idp.ReasonCritical}},
		{"crit header, empty list", func(f *forgery) string {
			return f.signedByHand(f.sandboxHeader(map[string]any{"crit": []string{}}), f.claims)
		}, []idp.Reason{idp.ReasonCritical}},
		{"genuine token re-spelled with base64 padding", func(f *forgery) string {
			return respelled(f.partnerJWT, base64.URLEncoding)
		}, []idp.Reason{idp.ReasonMalformed}},
		{"genuine token re-spelled in the standard base64 alphabet", func(f *forgery) string {
			// Sign until some segment holds - or _, so the re-spelling differs.
			for i := range 100 {
				tok := f.signedByHand(f.sandboxHeader(nil), f.with(map[string]any{"uti": fmt.Sprint("respell-", i)}))
				if strings.ContainsAny(tok, "-_") {
					return respelled(tok, base64.RawStdEncoding)
				}
			}
			f.t.Fatal("no token with - or _ in 100 tries")
			return ""
		}, []idp.Reason{idp.ReasonMalformed}},
		{"genuine token with non-zero trailing bits in the signature", func(f *forgery) string {
			// The last character of a 256-byte signature carries 2 bits; the
			// other 4 must be zero, or one signature has 16 spellings.
			const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
			last := strings.IndexByte(alphabet, f.partnerJWT[len(f.partnerJWT)-1])
			return f.partnerJWT[:len(f.partnerJWT)-1] + string(alphabet[last|1])
		}, []idp.Reason{idp.ReasonMalformed}},
		{"exp 1e300 (genuine key)", func(f *forgery) string {
			return f.signedByHand(f.sandboxHeader(nil), f.with(map[string]any{"exp": 1e300}))
		}, []idp.Reason{idp.ReasonExpired}},
		{"exp -1e300 (genuine key)", func(f *forgery) string {
			return f.signedByHand(f.sandboxHeader(nil), f.with(map[string]any{"exp": -1e300}))
		}, []idp.Reason{idp.ReasonExpired}},
		{"exp as an RFC 3339 string (genuine key)", func(f *forgery) string {
			return f.signedByHand(f.sandboxHeader(nil), f.with(map[string]any{"exp": f.now.Add(time.Hour).Format(time.RFC3339)}))
		}, []idp.Reason{idp.ReasonMalformed}},
		{"azp of a client that does not exist (genuine key)", func(f *forgery) string {
			return f.genuine(f.with(map[string]any{"azp": "no-such-client"}))
		}, []idp.Reason{idp.ReasonUnknownClient}},
		{"JWS JSON (flattened) of a real token", func(f *forgery) string {
			return jsonSerialization(f.partnerJWT, false, nil)
		}, []idp.Reason{idp.ReasonMalformed}},
		{"JWS JSON (flattened) of a real token with extra top-level claims", func(f *forgery) string {
			return jsonSerialization(f.norolesJWT, false, map[string]any{
				"roles": []string{sandbox.RoleTrialsRead}, "azp": partner, "aud": idp.DefaultResource, "exp": at(f, time.Hour),
			})
		}, []idp.Reason{idp.ReasonMalformed}},
		{"JWS JSON (general) of a real token with extra top-level claims", func(f *forgery) string {
			return jsonSerialization(f.norolesJWT, true, map[string]any{
				"roles": []string{sandbox.RoleTrialsRead}, "azp": partner, "aud": idp.DefaultResource, "exp": at(f, time.Hour),
			})
		}, []idp.Reason{idp.ReasonMalformed}},
	}
}

// TestTokenAttacks: each forged or altered token gets 401 with an
// invalid_token challenge and a problem+json body naming why.
func TestTokenAttacks(t *testing.T) {
	s := newSandbox(t)
	f := newForgery(t, s)

	// Controls: the forging machinery makes tokens the sandbox accepts, and
	// the genuine noroles token is a 403, so each 401 below is the attack's
	// doing and not a broken forger.
	t.Run("control: genuine claims re-signed with the sandbox key", func(t *testing.T) {
		if r := s.as(t).do(request{path: attackPath, token: f.genuine(f.claims)}); r.Status != http.StatusOK {
			t.Fatalf("re-signed genuine claims: %d %s, want 200", r.Status, r.Body)
		}
	})
	t.Run("control: genuine noroles token", func(t *testing.T) {
		r := s.as(t).do(request{path: attackPath, token: f.norolesJWT})
		wantProblem(t, r, http.StatusForbidden, sandbox.ProblemTypeForbidden)
	})

	for _, tt := range tokenAttacks() {
		t.Run(tt.name, func(t *testing.T) {
			fc := *f
			fc.t = t
			token := tt.token(&fc)
			r := s.as(t).do(request{path: attackPath, headers: map[string]string{"Authorization": "Bearer " + token}})
			p := wantProblem(t, r, http.StatusUnauthorized, sandbox.ProblemTypeUnauthorized)
			description := wantChallenge(t, r, "invalid_token")["error_description"]
			for what, text := range map[string]string{"error_description": description, "problem detail": p.Detail} {
				if !namesAny(text, tt.reasons) {
					t.Errorf("%s %q names none of the expected reasons %q", what, text, tt.reasons)
				}
			}
			if c := r.Header.Values("Set-Cookie"); len(c) > 0 {
				t.Errorf("a refused token set cookies %q: header injection?", c)
			}
		})
	}
}

// namesAny reports whether text mentions one of reasons.
func namesAny(text string, reasons []idp.Reason) bool {
	for _, reason := range reasons {
		if strings.Contains(text, string(reason)) {
			return true
		}
	}
	return false
}
