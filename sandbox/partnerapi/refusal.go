package partnerapi

import "github.com/referrals-sandbox/referrals-sandbox/idp"

// retryRemedy is what a client refused for a reason a new token cures
// (expired, forced by a rule) should do.
const retryRemedy = "obtain a new token and retry"

// refusalRemedy is the advice a 401's problem detail ends with: a new token
// cures an expired one, but not a token from elsewhere or for another API,
// where the client's configuration is wrong and a retry would fail again.
func refusalRemedy(reason idp.Reason) string {
	switch reason {
	case idp.ReasonWrongIssuer:
		return "the token was issued by another identity provider or sandbox: fetch tokens from this sandbox's auth_url (a new token from the same place will be refused too)"
	case idp.ReasonWrongAudience:
		return "the token is for another API: ask for scope " + idp.DefaultResource + "/.default"
	case idp.ReasonSignature, idp.ReasonUnknownKey, idp.ReasonAlgorithm:
		return "the token was not signed by this sandbox: fetch tokens from its token endpoint"
	case idp.ReasonMissing, idp.ReasonMalformed:
		return "send the access_token of a token response as Authorization: Bearer <token>"
	case idp.ReasonUnknownClient:
		return "the client does not exist in this sandbox's environment: use a registered client"
	case idp.ReasonClientDeleted:
		return "the client was deleted or its ttl ran out: create a new client (POST /__sandbox/clients) and get a token for it"
	case idp.ReasonCritical:
		return "the token was not issued by this sandbox: fetch tokens from its token endpoint"
	}
	return retryRemedy
}
