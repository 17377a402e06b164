package drift

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// compareAnswers lists every difference in form between the upstream's and
// the sandbox's answers to one probe.
func compareAnswers(p probe, up, sb answer) []Difference {
	var diffs []Difference
	add := func(aspect, u, s, detail string) {
		diffs = append(diffs, newDifference(p.name, aspect, u, s, detail))
	}
	if up.status != sb.status {
		add("status", strconv.Itoa(up.status), strconv.Itoa(sb.status), "the status code differs")
	}
	compareHeaders(up.header, sb.header, add)
	compareBodies(up.body, sb.body, add)
	switch p.kind {
	case tokenProbe:
		if up.status == 200 && sb.status == 200 {
			compareTokens(up.body, sb.body, add)
		}
	case tokenErrorProbe:
		// Entra's error code is a protocol constant clients branch on, so
		// here the value is the form.
		if u, s := entraError(up.body), entraError(sb.body); u != s {
			add("token-error:error", u, s, "the token endpoint's error code differs")
		}
		// So is Entra's AADSTS code, where the sandbox answers as Entra
		// does; a body without error_codes is a shape difference already.
		if u, s := entraCodes(up.body), entraCodes(sb.body); u != "" && s != "" && u != s {
			add("token-error:error_codes", u, s, "the token endpoint's AADSTS code differs")
		}
	}
	return diffs
}

// compareBodies compares the JSON shapes of two bodies, or says that one is
// empty or not JSON.
func compareBodies(up, sb []byte, add func(aspect, upstream, sandbox, detail string)) {
	us, uok := parseShape(up)
	ss, sok := parseShape(sb)
	switch {
	case uok && sok:
		compareShapes("$", us, ss, add)
	case bodyKind(up, uok) != bodyKind(sb, sok):
		add("body", bodyKind(up, uok), bodyKind(sb, sok), "one body is JSON, the other is not")
	}
}

func bodyKind(b []byte, isJSON bool) string {
	switch {
	case len(b) == 0:
		return "empty"
	case isJSON:
		return "JSON"
	}
	return "not JSON"
}

// entraCodes is the error_codes of an Entra error body as text, or "" when
// the body has none.
func entraCodes(body []byte) string {
	var v struct {
		Codes []int `json:"error_codes"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.Codes) == 0 {
		return ""
	}
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(v.Codes)), ","), "[]")
}

func entraError(body []byte) string {
	var v struct {
		Error *string `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil || v.Error == nil {
		return "absent"
	}
	return *v.Error
}
