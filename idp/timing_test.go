package idp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// With Config.ClockSkew (--clock-skew) a token is accepted up to that long
// past exp, and not a second more.
func TestValidateWithConfiguredClockSkew(t *testing.T) {
	t.Parallel()
	s := newSandbox(t, func(cfg *idp.Config) { cfg.ClockSkew = 30 * time.Second })
	raw := s.fetchToken(t, partnerID, partnerSecret, defaultScope)
	s.clock.Set(issuedExpiry().Add(30 * time.Second))
	if _, err := s.provider.Validate(raw, s.expectation()); err != nil {
		t.Errorf("30s past exp with a 30s skew: %v, want valid", err)
	}
	s.clock.Set(issuedExpiry().Add(31 * time.Second))
	if _, err := s.provider.Validate(raw, s.expectation()); !isReason(err, idp.ReasonExpired) {
		t.Errorf("31s past exp with a 30s skew: %v, want %q", err, idp.ReasonExpired)
	}
}

func TestNewRefusesANegativeClockSkew(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	_, err := idp.New(idp.Config{Keys: s.keys, Clock: s.clock, ClockSkew: -time.Second})
	if err == nil || !strings.Contains(err.Error(), "clock skew") {
		t.Errorf("idp.New with a negative skew: %v, want an error naming the clock skew", err)
	}
}

// A token minted while the clock was advanced stays valid after the clock
// goes back, until its exp passes on the new clock; a token whose nbf is
// beyond anything the sandbox issued is refused with a detail that says
// what to do.
func TestClockMovedBack(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.clock.Advance(time.Hour)
	minted := s.fetchToken(t, partnerID, partnerSecret, defaultScope)
	s.clock.Reset()
	if _, err := s.provider.Validate(minted, s.expectation()); err != nil {
		t.Fatalf("token minted an hour ahead, after the clock went back: %v, want valid", err)
	}
	// Its exp is an hour plus its lifetime away on the new clock.
	s.clock.Set(issuedExpiry().Add(time.Hour))
	if _, err := s.provider.Validate(minted, s.expectation()); err != nil {
		t.Errorf("at its exp on the new clock: %v, want valid", err)
	}
	s.clock.Set(issuedExpiry().Add(time.Hour + time.Second))
	if _, err := s.provider.Validate(minted, s.expectation()); !isReason(err, idp.ReasonExpired) {
		t.Errorf("past its exp: %v, want %q", err, idp.ReasonExpired)
	}

	s.clock.Reset()
	claims := s.handClaims()
	claims["nbf"] = fixedTime().Add(2 * time.Hour).Unix()
	claims["exp"] = fixedTime().Add(3 * time.Hour).Unix()
	never := signJWS(t, jwa.RS256, sandboxKey(t, s.keys.KeyID()), claims, map[string]any{"typ": "JWT"})
	_, err := s.provider.Validate(never, s.expectation())
	if !isReason(err, idp.ReasonNotYetValid) || !strings.Contains(err.Error(), "fetch a new token") {
		t.Errorf("nbf beyond anything issued: %v, want %q saying to fetch a new token", err, idp.ReasonNotYetValid)
	}
}
