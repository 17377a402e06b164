package idp

import (
	"strings"
	"time"
)

// Token personas: a client whose id starts with ShortTokenPrefix gets
// tokens that last ShortTokenLifetime, so a partner tests renewal in two
// minutes of real time without moving the clock. A tokenLifetimeSeconds
// set on the client still wins: it is the more specific setting.
const (
	ShortTokenPrefix   = "short-token-"
	ShortTokenLifetime = 2 * time.Minute
)

// personaLifetime is the token lifetime the client's id asks for, or
// fallback.
func personaLifetime(clientID string, fallback time.Duration) time.Duration {
	if strings.HasPrefix(clientID, ShortTokenPrefix) {
		return ShortTokenLifetime
	}
	return fallback
}
