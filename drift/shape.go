package drift

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/referrals-sandbox/referrals-sandbox/internal/lazyregexp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/placeholder"
)

// shape is the form of a JSON value, or of every value merged at one place
// (all the elements of an array): which JSON types and string formats
// occur, the members of objects with how often each was present, and the
// shape of array elements.
type shape struct {
	types   map[string]bool
	formats map[string]bool
	members map[string]*shape
	present map[string]int
	objects int
	elem    *shape
}

func newShape() *shape { return &shape{types: map[string]bool{}, formats: map[string]bool{}} }

// parseShape reads body as JSON; ok is false when it is not JSON.
func parseShape(body []byte) (*shape, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if dec.More() {
		return nil, false
	}
	s := newShape()
	s.add(v)
	return s, true
}

// add merges the value v into s.
func (s *shape) add(v any) {
	switch v := v.(type) {
	case nil:
		s.types["null"] = true
	case bool:
		s.types["boolean"] = true
	case json.Number:
		if strings.ContainsAny(v.String(), ".eE") {
			s.types["number"] = true
		} else {
			s.types["integer"] = true
		}
	case string:
		s.types["string"] = true
		s.formats[stringFormat(v)] = true
	case []any:
		s.types["array"] = true
		for _, e := range v {
			if s.elem == nil {
				s.elem = newShape()
			}
			s.elem.add(e)
		}
	case map[string]any:
		s.types["object"] = true
		if s.members == nil {
			s.members, s.present = map[string]*shape{}, map[string]int{}
		}
		s.objects++
		for name, mv := range v {
			m := s.members[name]
			if m == nil {
				m = newShape()
				s.members[name] = m
			}
			m.add(mv)
			s.present[name]++
		}
	}
}

func setString(set map[string]bool) string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, " or ")
}

var (
	dateRE     = lazyregexp.New(`^\d{4}-\d{2}-\d{2}$`)
	dateTimeRE = lazyregexp.New(`^\d{4}-\d{2}-\d{2}([Tt ])\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$`)
	uuidRE     = lazyregexp.New(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// stringFormat names the form of a string: a date, a date-time with its
// separator, offset and fraction digits, a UUID, a URI, or plain string.
func stringFormat(v string) string {
	switch {
	case dateRE().MatchString(v):
		return "date"
	case uuidRE().MatchString(v):
		return "uuid"
	case strings.HasPrefix(v, "https://"), strings.HasPrefix(v, "http://"), strings.HasPrefix(v, "urn:"):
		return "uri"
	}
	m := dateTimeRE().FindStringSubmatch(v)
	if m == nil {
		return "string"
	}
	sep := "T"
	if m[1] == " " {
		sep = "space"
	}
	offset := "no offset"
	switch {
	case m[3] == "Z" || m[3] == "z":
		offset = "Z"
	case m[3] != "":
		offset = "±hh:mm"
		if !strings.Contains(m[3], ":") {
			offset = "±hhmm"
		}
	}
	fraction := "no fraction"
	if m[2] != "" {
		fraction = strconv.Itoa(len(m[2])-1) + " fraction digits"
	}
	return fmt.Sprintf("date-time (%s separator, %s, %s)", sep, offset, fraction)
}

// compareShapes appends a difference for every place where the two shapes
// differ in type, format, membership or optionality; path is where they
// stand, "$" at the top.
func compareShapes(path string, up, sb *shape, add func(aspect, upstream, sandbox, detail string)) {
	aspect := "body:" + path
	if ut, st := setString(up.types), setString(sb.types); ut != st {
		add(aspect, ut, st, "the JSON type differs")
	}
	if up.types["string"] && sb.types["string"] {
		if uf, sf := setString(up.formats), setString(sb.formats); uf != sf {
			add(aspect, uf, sf, "the string format differs")
		}
	}
	if up.members != nil && sb.members != nil {
		compareMembers(path, up, sb, add)
	}
	if up.elem != nil && sb.elem != nil {
		compareShapes(path+"[]", up.elem, sb.elem, add)
	}
}

func compareMembers(path string, up, sb *shape, add func(aspect, upstream, sandbox, detail string)) {
	names := map[string]bool{}
	for n := range up.members {
		names[n] = true
	}
	for n := range sb.members {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		um, sm := up.members[n], sb.members[n]
		mp := memberPath(path, n)
		if sm == nil && !placeholder.IdentifierLike(n) {
			mp = path + "[" + unknownName(n) + "]"
		}
		switch {
		case sm == nil:
			add("body:"+mp, "present", "absent", "a member only the upstream sends")
		case um == nil:
			add("body:"+mp, "absent", "present", "a member only the sandbox sends")
		default:
			// Optionality shows only where several objects were seen
			// together (the elements of an array).
			uo, so := presence(up, n), presence(sb, n)
			if up.objects > 1 && sb.objects > 1 && uo != so {
				add("body:"+mp, uo, so, "always present on one side, optional on the other")
			}
			compareShapes(mp, um, sm, add)
		}
	}
}

func presence(s *shape, name string) string {
	if s.present[name] == s.objects {
		return "always present"
	}
	return "optional"
}

// unknownName stands for a member name only the upstream sends that is not
// identifier-like (see placeholder.IdentifierLike): a patient's name, a
// date or an id used as a key is data, and a report must not carry it. It
// says the name's form and length, which is what a developer needs to
// find the member.
func unknownName(name string) string {
	return fmt.Sprintf("a %s name of %d characters", stringFormat(name), utf8.RuneCountInString(name))
}

var simpleName = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// memberPath extends a JSON path by one member, quoting odd names so a
// key never holds spaces or slashes unquoted.
func memberPath(path, name string) string {
	if simpleName().MatchString(name) {
		return path + "." + name
	}
	quoted := strings.NewReplacer(" ", `\u0020`, "/", `\u002f`).Replace(strconv.QuoteToASCII(name))
	return path + "[" + quoted + "]"
}
