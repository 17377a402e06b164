package drift

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// AllowList is the differences a team has accepted: one per line, the
// difference's key (as the JSON output shows it) and then the reason.
// A * in a key matches any run of characters ("*/header:Vary"). Blank
// lines and lines starting with # are ignored.
type AllowList struct {
	entries []allowEntry
}

type allowEntry struct {
	key    string
	match  *regexp.Regexp
	reason string
}

// ParseAllowList reads an allow file; a line without a reason is an error,
// since an allowed difference nobody can explain is a difference.
func ParseAllowList(r io.Reader) (AllowList, error) {
	var list AllowList
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, _ := strings.Cut(line, " ")
		if i := strings.IndexAny(line, " \t"); i > 0 {
			key, reason = line[:i], strings.TrimSpace(line[i:])
		}
		if reason == "" {
			return AllowList{}, fmt.Errorf("line %d: %q has no reason; write the key, a space and why the difference is fine", n, key)
		}
		if !strings.Contains(key, "/") {
			return AllowList{}, fmt.Errorf("line %d: %q is not a difference key (probe/aspect, as the JSON output's key shows)", n, key)
		}
		pattern := "^" + strings.ReplaceAll(regexp.QuoteMeta(key), `\*`, ".*") + "$"
		list.entries = append(list.entries, allowEntry{key: key, match: regexp.MustCompile(pattern), reason: reason})
	}
	if err := sc.Err(); err != nil {
		return AllowList{}, fmt.Errorf("read allow file: %w", err)
	}
	return list, nil
}

// reason returns why a difference is allowed, "" when it is not.
func (l AllowList) reason(d Difference) string {
	for _, e := range l.entries {
		if e.match.MatchString(d.Key) {
			return e.reason
		}
	}
	return ""
}
