package drift

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// expiresInTolerance is how far apart the two sides' expires_in may be
// before drift calls it a difference: Entra's lifetimes vary by a few
// minutes from token to token.
const expiresInTolerance = 300

// tokenResponse is the part of a token response drift reads.
type tokenResponse struct {
	TokenType   string       `json:"token_type"`
	ExpiresIn   *json.Number `json:"expires_in"`
	AccessToken string       `json:"access_token"`
}

// jwtParts is an access token's header and claims, decoded without any
// check of the signature: drift compares their form only.
type jwtParts struct {
	header map[string]any
	claims *shape
}

func decodeJWT(token string) (jwtParts, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return jwtParts{}, fmt.Errorf("not a JWT (%d parts)", len(parts))
	}
	rawHeader, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return jwtParts{}, fmt.Errorf("JWT header is not base64url")
	}
	var header map[string]any
	if err := json.Unmarshal(rawHeader, &header); err != nil {
		return jwtParts{}, fmt.Errorf("JWT header is not a JSON object")
	}
	rawClaims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return jwtParts{}, fmt.Errorf("JWT claims are not base64url")
	}
	claims, ok := parseShape(rawClaims)
	if !ok || claims.members == nil {
		return jwtParts{}, fmt.Errorf("JWT claims are not a JSON object")
	}
	return jwtParts{header: header, claims: claims}, nil
}

// compareTokens compares two successful token responses: token_type,
// expires_in within a tolerance, alg and typ of the JWT header and whether
// it has a kid, and the names and forms of the claims.
func compareTokens(upBody, sbBody []byte, add func(aspect, upstream, sandbox, detail string)) {
	var up, sb tokenResponse
	uerr, serr := json.Unmarshal(upBody, &up), json.Unmarshal(sbBody, &sb)
	if uerr != nil || serr != nil {
		return // the body shape comparison already says so
	}
	if up.TokenType != sb.TokenType {
		add("token:token_type", up.TokenType, sb.TokenType, "token_type differs")
	}
	compareExpiresIn(up.ExpiresIn, sb.ExpiresIn, add)
	uj, uerr := decodeJWT(up.AccessToken)
	sj, serr := decodeJWT(sb.AccessToken)
	switch {
	case uerr != nil && serr != nil:
		return
	case uerr != nil || serr != nil:
		add("token:access_token", errOrJWT(uerr), errOrJWT(serr), "only one side issues JWT access tokens")
		return
	}
	for _, name := range []string{"alg", "typ"} {
		u, s := headerValue(uj.header, name), headerValue(sj.header, name)
		if u != s {
			add("jwt-header:"+name, u, s, "the JWT header's "+name+" differs")
		}
	}
	for _, name := range []string{"kid", "x5t"} {
		u, s := headerPresence(uj.header, name), headerPresence(sj.header, name)
		if u != s {
			add("jwt-header:"+name, u, s, "the JWT header has "+name+" on one side only")
		}
	}
	compareShapes("$", uj.claims, sj.claims, func(aspect, u, s, detail string) {
		add("claim:"+strings.TrimPrefix(strings.TrimPrefix(aspect, "body:$"), "."), u, s, strings.Replace(detail, "member", "claim", 1))
	})
}

func compareExpiresIn(up, sb *json.Number, add func(aspect, upstream, sandbox, detail string)) {
	if up == nil || sb == nil {
		return // a missing member is a body shape difference
	}
	u, uerr := up.Int64()
	s, serr := sb.Int64()
	if uerr != nil || serr != nil {
		return // not an integer: a body shape difference
	}
	if d := u - s; d > expiresInTolerance || d < -expiresInTolerance {
		add("token:expires_in", fmt.Sprintf("%d s", u), fmt.Sprintf("%d s", s),
			fmt.Sprintf("token lifetimes differ by more than %d s", expiresInTolerance))
	}
}

func errOrJWT(err error) string {
	if err != nil {
		return err.Error()
	}
	return "JWT"
}

func headerValue(h map[string]any, name string) string {
	v, ok := h[name]
	if !ok {
		return "absent"
	}
	return fmt.Sprint(v)
}

func headerPresence(h map[string]any, name string) string {
	if _, ok := h[name]; ok {
		return "present"
	}
	return "absent"
}
