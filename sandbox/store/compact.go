package store

import (
	"encoding/json"
	"strings"
)

// A stored referral leaves out of its JSON what its sort line already
// holds: outcomesId, clientId and submittedAt, and the fixed names of the
// members around them, about 145 of a referral's 445 bytes (issue 27: memory
// per record). Its value is the sort line, a newline, compactMark, then the
// JSON's trialId and status values and whatever follows submittedAt:
//
//	<client>:<submittedAt>:<id>\n~"TRIAL-1""received","patient":{...}}
//
// expandRecord rebuilds the JSON byte for byte; compactReferral keeps the
// compact form only when it does. A value whose JSON part starts with '{' (a
// file written before this form, a qualified referral, or a referral that
// does not compact) is read as it is, so older data files open unchanged and
// their records take the compact form when next written.
const compactMark = '~'

// The JSON around the members the compact form leaves out, in
// referrals.Referral's order, which json.Marshal follows.
const (
	jsonTrial     = `{"trialId":`
	jsonOutcomes  = `,"outcomesId":`
	jsonClient    = `,"clientId":`
	jsonStatus    = `,"status":`
	jsonSubmitted = `,"submittedAt":`
)

// compactReferral returns the stored value of a referral whose sort line is
// line and whose JSON (json.Marshal's) is js: the compact form when it
// expands back to js exactly, else line and js as they are.
func compactReferral(line, js string) string {
	trial, rest, ok := cutMember(js, jsonTrial)
	var status string
	for _, name := range []string{jsonOutcomes, jsonClient, jsonStatus, jsonSubmitted} {
		var value string
		if !ok {
			break
		}
		value, rest, ok = cutMember(rest, name)
		if name == jsonStatus {
			status = value
		}
	}
	if ok {
		compact := line + "\n" + string(compactMark) + trial + status + rest
		var buf [1024]byte // most records: the check allocates nothing
		if b, ok := appendRecordJSON(buf[:0], compact); ok && string(b) == js {
			return compact
		}
	}
	return line + "\n" + js
}

// cutMember cuts prefix (a member's name and what precedes it) and the JSON
// string after it from the start of s.
func cutMember(s, prefix string) (value, rest string, ok bool) {
	s, ok = strings.CutPrefix(s, prefix)
	if !ok {
		return "", "", false
	}
	n := jsonStringLen(s)
	if n == 0 {
		return "", "", false
	}
	return s[:n], s[n:], true
}

// jsonStringLen is the length of the JSON string token s starts with, 0 if
// it starts with none.
func jsonStringLen(s string) int {
	if s == "" || s[0] != '"' {
		return 0
	}
	for i := 1; i < len(s); {
		j := strings.IndexByte(s[i:], '"')
		if j < 0 {
			return 0
		}
		end := i + j
		// The quote ends the string unless an odd number of backslashes
		// precedes it.
		n := 0
		for k := end - 1; k >= i && s[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return end + 1
		}
		i = end + 1
	}
	return 0
}

// recordJSON is the JSON of the record stored as value.
func recordJSON(value string) (string, bool) {
	_, record := splitValue(value)
	if record == "" || record[0] != compactMark {
		return record, true
	}
	b, ok := appendRecordJSON(nil, value)
	return string(b), ok
}

// appendRecordJSON appends the JSON of the record stored as value to b,
// expanding a compact referral. false means a compact value that does not
// parse: the record is damaged.
func appendRecordJSON(b []byte, value string) ([]byte, bool) {
	line, record := splitValue(value)
	if record == "" || record[0] != compactMark {
		return append(b, record...), true
	}
	client, rest, ok := strings.Cut(line, ":")
	const tsLen = len("2006-01-02T15:04:05.000000Z")
	if !ok || len(rest) < tsLen+2 || rest[tsLen] != ':' {
		return b, false
	}
	at, id := rest[:tsLen], rest[tsLen+1:]
	record = record[1:]
	trial := jsonStringLen(record)
	status := jsonStringLen(record[trial:])
	if trial == 0 || status == 0 {
		return b, false
	}
	b = append(b, jsonTrial...)
	b = append(b, record[:trial]...)
	b = append(b, jsonOutcomes...)
	if b, ok = appendJSONString(b, id); !ok {
		return b, false
	}
	b = append(b, jsonClient...)
	if b, ok = appendJSONString(b, client); !ok {
		return b, false
	}
	b = append(b, jsonStatus...)
	b = append(b, record[trial:trial+status]...)
	b = append(b, jsonSubmitted...)
	b = append(b, '"')
	b = append(b, at...)
	b = append(b, '"')
	return append(b, record[trial+status:]...), true
}

// appendJSONString appends the JSON string of the identifier escape made
// escaped, as json.Marshal writes it; false if escaped is not escape's.
func appendJSONString(b []byte, escaped string) ([]byte, bool) {
	if isPlainJSON(escaped) {
		b = append(b, '"')
		b = append(b, escaped...)
		return append(b, '"'), true
	}
	id, ok := unescape(escaped)
	if !ok {
		return b, false
	}
	enc, err := json.Marshal(id)
	if err != nil {
		return b, false
	}
	return append(b, enc...), true
}

// isPlainJSON reports whether every byte of s is plainJSON.
func isPlainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			return false
		}
	}
	return true
}

// plainJSON marks the bytes json.Marshal writes as they are in a string and
// escape leaves alone: printable ASCII but for '"', '\\', the HTML
// characters json.Marshal escapes, and escape's '%'.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`"\<>&%`, rune(c))
	}
	return t
}()

// unescape reverses escape.
func unescape(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			out.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		hi, lo := unhex(s[i+1]), unhex(s[i+2])
		if hi < 0 || lo < 0 {
			return "", false
		}
		out.WriteByte(byte(hi<<4 | lo))
		i += 2
	}
	return out.String(), true
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}
