package sandbox

import (
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// refuseRequest answers 400 to a request the sandbox refuses before routing
// it (a bad X-Sandbox-* value, plain HTTP to --tls) in the shape of the
// endpoint it was for: Entra's error body on the token endpoint, whose
// clients parse nothing else (interface 7.1), problem+json everywhere else.
func (s *Server) refuseRequest(w http.ResponseWriter, r *http.Request, detail string) {
	if reply.EndpointOf(r) == scenarios.EndpointToken {
		idp.WriteTokenError(w, r, s.clocks.Now(""), idp.InvalidRequest(detail))
		return
	}
	s.reply.Problem(w, r, reply.New(http.StatusBadRequest, detail))
}
