package idp

import (
	"strings"
	"time"
)

// Token personas: a client whose id starts with ShortTokenPrefix gets
// tokens that last ShortTokenLifetime, so a partner tests renewal in a
// minute of real time without moving the clock. MSAL (Python, Node, .NET,
// Java, Go) treats a token with less than LibraryRefreshMargin left as
// expired, so the lifetime exceeds that margin by a minute: a cache-first
// MSAL client reuses the token for a minute, then renews it. A shorter
// token would make such a client fetch one per call. A
// tokenLifetimeSeconds set on the client still wins: it is the more
// specific setting.
const (
	ShortTokenPrefix   = "short-token-"
	ShortTokenLifetime = LibraryRefreshMargin + time.Minute
)

// LibraryRefreshMargin is how long before expiry Microsoft's libraries
// stop using a cached token and fetch a new one (msal-node's
// DEFAULT_TOKEN_RENEWAL_OFFSET_SEC, MSAL Python's and MSAL Go's 5 minutes).
const LibraryRefreshMargin = 5 * time.Minute

// personaLifetime is the token lifetime the client's id asks for, or
// fallback.
func personaLifetime(clientID string, fallback time.Duration) time.Duration {
	if strings.HasPrefix(clientID, ShortTokenPrefix) {
		return ShortTokenLifetime
	}
	return fallback
}
