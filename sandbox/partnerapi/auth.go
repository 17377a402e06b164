package partnerapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/request"
)

// Roles (app permissions) the API checks, as clients.json grants them.
const (
	RoleTrialsRead              = "Trials.Read"
	RoleReferralsRead           = "Referrals.Read"
	RoleReferralsWrite          = "Referrals.Write"
	RoleQualifiedReferralsRead  = "QualifiedReferrals.Read"
	RoleQualifiedReferralsWrite = "QualifiedReferrals.Write"
	// RoleAny lets any valid token with at least one role through (the ping).
	RoleAny = ""
)

// realm names the sandbox in WWW-Authenticate challenges.
const realm = "referrals-sandbox"

// Handler is an API operation that stores nothing; it runs only for
// an authenticated caller.
type Handler func(w http.ResponseWriter, r *http.Request, caller idp.Principal)

// Submitter is an API operation that takes a submission; it runs only
// for an authenticated caller. It returns what was submitted
// (submissionOf), for the journal's resubmits-safely check, or "" when
// the body was refused before that was known.
type Submitter func(w http.ResponseWriter, r *http.Request, caller idp.Principal) (submission string)

// Reads makes an operation that stores nothing a Submitter.
func Reads(h Handler) Submitter {
	return func(w http.ResponseWriter, r *http.Request, caller idp.Principal) string {
		h(w, r, caller)
		return ""
	}
}

// Authenticated validates the bearer token and checks the role before
// calling h: 401 with an RFC 6750 invalid_token challenge for a bad token,
// 403 with insufficient_scope for a missing role. It reports the token it
// accepted, or why it refused one, and what h says was submitted.
func (a *API) Authenticated(role string, h Submitter) exchange.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c exchange.Caller) exchange.Outcome {
		caller, err := idp.Principal{}, c.TokenErr
		if err == nil {
			caller, err = a.provider.Validate(request.Bearer(r), idp.Expectation{
				Audience:      a.audience,
				ApplicationID: a.audienceID,
				Issuers:       a.issuers(r),
				// A token issued through any name the sandbox serves is
				// valid through any other, as Entra has one issuer.
				AcceptIssuer: a.ownIssuer,
			})
		}
		if err != nil {
			var out exchange.Outcome
			remedy := retryRemedy
			if v, ok := idp.IsValidationError(err); ok {
				out.Refusal = string(v.Reason)
				remedy = refusalRemedy(v.Reason)
			}
			a.RefuseToken(w, r, err.Error(), remedy)
			return out
		}
		out := exchange.Outcome{Verified: idp.Claimed{ClientID: caller.ClientID, TokenID: caller.TokenID, ExpiresAt: caller.ExpiresAt}}
		if missing := missingRole(caller, role); missing != "" {
			a.Forbid(w, r, missing)
			return out
		}
		out.Submission = h(w, r, caller)
		return out
	}
}

// missingRole names what the caller lacks for role, or "" when allowed.
func missingRole(caller idp.Principal, role string) string {
	switch {
	case role == RoleAny && len(caller.Roles) == 0:
		return "any role of this API"
	case role != RoleAny && !caller.HasRole(role):
		return role
	}
	return ""
}

// RefuseToken answers 401 with an RFC 6750 challenge and a problem body
// ending with the remedy that fits.
func (a *API) RefuseToken(w http.ResponseWriter, r *http.Request, description, remedy string) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s", error="invalid_token", error_description="%s"`, realm, challengeText(description)))
	a.reply.Problem(w, r, reply.New(http.StatusUnauthorized, description+"; "+remedy))
}

// Forbid answers 403 with an insufficient_scope challenge naming the role.
func (a *API) Forbid(w http.ResponseWriter, r *http.Request, role string) {
	description := "the access token lacks the permission " + role
	challenge := fmt.Sprintf(`Bearer realm="%s", error="insufficient_scope", error_description="%s"`, realm, challengeText(description))
	if !strings.Contains(role, " ") {
		// scope is a space-separated list of the roles needed (RFC 6750 3);
		// "any role" is not one.
		challenge += fmt.Sprintf(`, scope="%s"`, challengeText(role))
	}
	w.Header().Set("WWW-Authenticate", challenge)
	a.reply.Problem(w, r, reply.New(http.StatusForbidden, description+"; ask for the scope and permissions to be reviewed"))
}

// challengeText makes text safe inside a quoted WWW-Authenticate parameter:
// RFC 6750 section 3 allows printable ASCII without '"' and '\\' there. A
// token's own text (a forged kid, say) can carry anything, so everything
// else becomes '?' ('"' becomes '\”).
func challengeText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '"':
			return '\''
		case r == '\\' || r < 0x20 || r > 0x7e:
			return '?'
		}
		return r
	}, s)
}

// issuers are the iss values accepted on r: tokens issued at the address the
// request came in on, or at the public URL.
// The last base's list is kept (one entry, so a client sending many Host
// names cannot grow it): most requests come in through one address.
func (a *API) issuers(r *http.Request) []string {
	if last := a.lastIssuers.Load(); last != nil && a.provider.IsBaseURL(r, last.base) {
		return last.issuers
	}
	base := a.provider.BaseURL(r)
	list := []string{a.provider.Issuer(base)}
	a.lastIssuers.Store(&baseIssuers{base: base, issuers: list})
	return list
}

// baseIssuers are the issuers accepted through one base URL.
type baseIssuers struct {
	base    string
	issuers []string
}

// RetryRemedy is the advice for a refusal a new token cures.
func (a *API) RetryRemedy() string { return retryRemedy }
