package partnerapi

import (
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// pingTimestampLayout is the ping's timestamp: ISO 8601 UTC with an explicit
// +00:00 offset and fractional seconds (interface document, section 2.3).
const pingTimestampLayout = "2006-01-02T15:04:05.000000-07:00"

// pingResponse is the ping body.
type pingResponse struct {
	Message   string `json:"message"`
	Timestamp string `json:"timestamp"`
}

// Ping answers GET /health/ping for any caller with a role: pong.
func (a *API) Ping(w http.ResponseWriter, _ *http.Request, caller idp.Principal) {
	reply.JSON(w, http.StatusOK, pingResponse{
		Message:   "pong",
		Timestamp: a.clocks.Now(caller.ClientID).UTC().Format(pingTimestampLayout),
	})
}
