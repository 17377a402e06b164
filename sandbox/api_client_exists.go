package sandbox

import "github.com/referrals-sandbox/referrals-sandbox/idp"

// ReasonUnknownClient is the refusal of a validly signed token whose client
// no longer exists in this sandbox (deleted, or of the other environment):
// as with a deleted app registration, its tokens stop working at once.
const ReasonUnknownClient idp.Reason = "unknown client"

// clientExists refuses a token whose client the sandbox does not know.
func (s *Server) clientExists(caller idp.Principal) error {
	if _, ok := s.cfg.Provider.Client(caller.ClientID); !ok {
		return &idp.ValidationError{Reason: ReasonUnknownClient, Detail: "client '" + caller.ClientID + "' does not exist in this sandbox"}
	}
	return nil
}
