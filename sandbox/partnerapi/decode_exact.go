package partnerapi

import (
	jsonv2 "github.com/go-json-experiment/json"
)

// exactJSON marks a request type that decodeExact may decode: it holds
// only structs, strings, slices and pointers (no maps, interfaces, numbers
// or custom unmarshalers), and no two of a struct's JSON names differ only
// in case. TestExactJSONTypes checks every type that claims it.
type exactJSON interface{ decodesExactly() }

func (*referralRequest) decodesExactly()          {}
func (*qualifiedReferralRequest) decodesExactly() {}

// decodeExact decodes nearly every submission in one pass: a body that is
// one JSON object of valid UTF-8 whose members all name a field of the
// target exactly (case included), none twice, each holding its field's
// JSON kind. Such a body has nothing for decodeBody to refuse or explain,
// and go-json-experiment/json decodes it into an exactJSON target as
// encoding/json does, without decodeBody's two passes (the scan for
// repeated members, then encoding/json). It reports false, leaving into
// partly filled, for any other body: decodeBody then decides, from a clean
// target, what to answer.
func decodeExact(body []byte, into exactJSON) bool {
	// A top-level null would decode into a struct as its zero value; only
	// an object is a submission.
	if first := trimJSONSpace(body); len(first) == 0 || first[0] != '{' {
		return false
	}
	// The defaults refuse repeated names, invalid UTF-8 and data after the
	// object, and match member names case-sensitively.
	return jsonv2.Unmarshal(body, into, jsonv2.RejectUnknownMembers(true)) == nil
}
