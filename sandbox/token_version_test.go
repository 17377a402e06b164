package sandbox_test

import (
	"net/http"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/testutil"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// TestAPIAcceptsItsTokensInEitherFormat: whichever of Entra's token formats
// the sandbox issues (--token-version), its own API accepts the tokens, and
// they have that format's shape (docs/identity-provider.md, Token versions).
func TestAPIAcceptsItsTokensInEitherFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		version     idp.TokenVersion
		ver, client string
		aud         string
	}{
		{idp.TokenV2, "2.0", "azp", idp.ApplicationID(idp.DefaultResource)},
		{idp.TokenV1, "1.0", "appid", idp.DefaultResource},
	}
	for _, tc := range tests {
		t.Run(tc.ver, func(t *testing.T) {
			t.Parallel()
			s := openSandbox(t, sandbox.Config{TokenVersion: tc.version})
			tok := s.token(partner)
			claims := testutil.JWTClaims(t, tok)
			if claims["ver"] != tc.ver || claims[tc.client] != partner || claims["aud"] != tc.aud {
				t.Errorf("claims ver %v, %s %v, aud %v; want %s, %s, %s", claims["ver"], tc.client, claims[tc.client], claims["aud"], tc.ver, partner, tc.aud)
			}
			for _, path := range []string{trialsPath, pingPath} {
				if r := s.do(request{path: path, token: tok}); r.Status != http.StatusOK {
					t.Errorf("%s with a %s token: %d %s", path, tc.ver, r.Status, r.Body)
				}
			}
		})
	}
}
