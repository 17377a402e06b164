package store

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// cursor is where a listing stopped: the sort line of the last returned
// record, and which listing it belongs to. The client is the line's prefix,
// so a cursor cannot be replayed against another client or listing.
type cursor struct {
	Kind string `json:"k"`
	Line string `json:"l"`
}

// encodeCursor makes the opaque cursor handed to callers: base64url of
// the cursor's JSON, as json.Marshal writes it. Strings json.Marshal
// writes as they are (plainJSON) are written directly: reflecting over
// the struct cost a listing more than walking its page of the index.
func encodeCursor(kind, line string) (string, error) {
	var b []byte
	if isPlainJSON(kind) && isPlainJSON(line) {
		b = make([]byte, 0, len(`{"k":"","l":""}`)+len(kind)+len(line))
		b = append(append(append(b, `{"k":"`...), kind...), `","l":"`...)
		b = append(append(b, line...), `"}`...)
	} else {
		var err error
		if b, err = json.Marshal(cursor{Kind: kind, Line: line}); err != nil {
			return "", fmt.Errorf("encode cursor: %w", err)
		}
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// decodeCursor parses a cursor, checks that it belongs to the listing of
// kind for clientID and returns its sort line. Every failure is
// ErrBadCursor; the details stay in the message for logs.
func decodeCursor(s, kind, clientID string) (string, error) {
	line, err := parseCursor(s, kind)
	if err != nil {
		return "", err
	}
	rest, ok := strings.CutPrefix(line, clientSortPrefix(clientID))
	if !ok {
		return "", fmt.Errorf("%w: cursor of another client", ErrBadCursor)
	}
	// rest is <submittedAt>:<escaped id>; the id holds no ':'.
	i := strings.LastIndexByte(rest, ':')
	if i < 0 || i == len(rest)-1 || strings.ContainsRune(rest, '\n') {
		return "", fmt.Errorf("%w: no record id", ErrBadCursor)
	}
	if at, err := CanonicalTimestamp(rest[:i]); err != nil || at != rest[:i] {
		return "", fmt.Errorf("%w: bad timestamp", ErrBadCursor)
	}
	return line, nil
}

// parseCursor decodes a cursor of the listing kind and returns its line,
// which the listing checks further. Every failure is ErrBadCursor.
func parseCursor(s, kind string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("%w: not base64url", ErrBadCursor)
	}
	var c cursor
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || dec.More() {
		return "", fmt.Errorf("%w: malformed", ErrBadCursor)
	}
	if c.Kind != kind {
		return "", fmt.Errorf("%w: cursor of another listing", ErrBadCursor)
	}
	return c.Line, nil
}
