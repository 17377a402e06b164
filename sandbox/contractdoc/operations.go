package contractdoc

import (
	"net/http"
	"strings"
)

// Operation names one of the six referral operations a contract can take
// over. The names are the ones `contract check` prints.
type Operation string

// The six referral operations, in the order the interface lists them.
const (
	CreateReferral  Operation = "createReferral"
	ListReferrals   Operation = "listReferrals"
	GetReferral     Operation = "getReferral"
	CreateQualified Operation = "createQualified"
	ListQualified   Operation = "listQualified"
	GetQualified    Operation = "getQualified"
)

// route is where an operation lives, relative to the API's base /api/v1,
// with path parameters written as {}: they match whatever the document calls
// them, while the sandbox keeps the interface's names.
type route struct {
	op     Operation
	method string
	path   string
}

var routes = []route{
	{CreateReferral, http.MethodPost, "/referrals"},
	{ListReferrals, http.MethodGet, "/referrals"},
	{GetReferral, http.MethodGet, "/referrals/{}/{}"},
	{CreateQualified, http.MethodPost, "/referrals/qualified"},
	{ListQualified, http.MethodGet, "/referrals/qualified"},
	{GetQualified, http.MethodGet, "/referrals/qualified/{}"},
}

// Operations lists the six operations in order.
func Operations() []Operation {
	ops := make([]Operation, len(routes))
	for i, r := range routes {
		ops[i] = r.op
	}
	return ops
}

// apiBase is the API's base address under {base_url}.
const apiBase = "/api/v1"

// template reduces a document's path to the form routes use: relative to
// /api/v1, without a trailing slash, parameters as {}. under is the path of
// the document's first servers URL: a document whose servers URL ends in
// /api/v1 writes its paths from there. ok is false for paths outside the API.
func template(path, under string) (string, bool) {
	switch {
	case strings.HasSuffix(strings.TrimSuffix(under, "/"), apiBase) && !strings.HasPrefix(path, apiBase+"/"):
	case strings.HasPrefix(path, apiBase+"/"):
		path = strings.TrimPrefix(path, apiBase)
	default:
		return "", false
	}
	segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = "{}"
		}
	}
	return strings.Join(segs, "/"), true
}

// describes reports whether the contract describes the operation at the
// document's path and (lower-case) method.
func (c *Contract) describes(path, method string) bool {
	for _, op := range c.ops {
		if op.Path == path && strings.EqualFold(op.Method, method) {
			return true
		}
	}
	return false
}
