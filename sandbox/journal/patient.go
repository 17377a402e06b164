package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
)

// Kinds of patient data, by the JSON member names that carry them
// (compared in lower case). Members inside an address object are
// addresses whatever their name, but for the country.
var patientKinds = map[string]string{
	"firstname": "name", "lastname": "name", "middlename": "name", "givenname": "name", "familyname": "name",
	"fullname": "name", "patientname": "name", "preferredname": "name", "screenername": "name",
	"dateofbirth": "dob", "birthdate": "dob", "dob": "dob",
	"email": "email", "emailaddress": "email",
	"phone": "phone", "phonenumber": "phone", "mobile": "phone", "telephone": "phone",
	"postalcode": "postal", "zip": "postal", "zipcode": "postal", "postcode": "postal",
	"line1": "address", "line2": "address", "street": "address", "city": "address",
	"notes": "text", "note": "text", "comment": "text", "comments": "text",
}

// addressMembers name objects whose strings are all address lines.
var addressMembers = map[string]bool{"address": true, "addresses": true, "homeaddress": true}

// Placeholders replaces patient data in the JSON bodies the recording
// proxy journals (names, dates of birth, contact details, addresses, free
// text) with placeholders, the same value always with the same
// placeholder for the life of one Placeholders (one run of the sandbox).
// Each placeholder keeps its value's form (a date stays a date, an e-mail
// an e-mail), so the recording still shows the real service's formats.
// Safe for concurrent use; bounded: beyond maxPlaceholders distinct
// values, new ones share one placeholder per kind.
type Placeholders struct {
	mu    sync.Mutex
	seen  map[string]string
	count map[string]int
}

// maxPlaceholders bounds the memory Placeholders keeps.
const maxPlaceholders = 100000

// NewPlaceholders returns an empty set of placeholders.
func NewPlaceholders() *Placeholders {
	return &Placeholders{seen: map[string]string{}, count: map[string]int{}}
}

// RedactJSON returns body with every patient value replaced by its
// placeholder and every string credential reports true for replaced by
// Redacted. ok is false when body is not JSON: the caller keeps none of it.
func (p *Placeholders) RedactJSON(body []byte, credential func(string) bool) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	out, err := json.Marshal(p.walk(v, "", false, credential))
	if err != nil {
		return nil, false
	}
	return out, true
}

func (p *Placeholders) walk(v any, member string, inAddress bool, credential func(string) bool) any {
	name := strings.ToLower(member)
	switch v := v.(type) {
	case map[string]any:
		address := inAddress || addressMembers[name]
		for k, mv := range v {
			v[k] = p.walk(mv, k, address, credential)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = p.walk(e, member, inAddress, credential)
		}
		return v
	case string:
		kind := patientKinds[name]
		if kind == "" && inAddress && name != "country" {
			kind = "address"
		}
		switch {
		case kind != "":
			return p.placeholder(kind, v)
		case credential != nil && credential(v):
			return redact.Redacted
		}
		return v
	}
	return v
}

// placeholder returns value's placeholder of kind, making the next one
// for a value not seen yet.
func (p *Placeholders) placeholder(kind, value string) string {
	if value == "" {
		return ""
	}
	key := kind + "\x00" + value
	p.mu.Lock()
	defer p.mu.Unlock()
	if ph, ok := p.seen[key]; ok {
		return ph
	}
	n := p.count[kind] + 1
	if len(p.seen) >= maxPlaceholders {
		n = 0
	} else {
		p.count[kind] = n
	}
	ph := placeholderOf(kind, value, n)
	if n > 0 {
		p.seen[key] = ph
	}
	return ph
}

// placeholderOf is the n-th placeholder of a kind, in its value's form.
func placeholderOf(kind, value string, n int) string {
	switch kind {
	case "name":
		return fmt.Sprintf("Name%d", n)
	case "dob":
		if _, err := time.Parse(time.DateOnly, value); err == nil {
			return time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n).Format(time.DateOnly)
		}
		return fmt.Sprintf("date-%d", n)
	case "email":
		return fmt.Sprintf("person%d@example.com", n)
	case "phone":
		return fmt.Sprintf("+1555%07d", n)
	case "postal":
		return fmt.Sprintf("%05d", n%100000)
	case "address":
		return fmt.Sprintf("Address %d", n)
	}
	return fmt.Sprintf("Text %d", n)
}
