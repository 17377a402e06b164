package redact

import "strings"

// MaxLogValueBytes is how much of a caller's value a log line keeps: enough
// to recognise a client id, a Host or a path, too little for a caller to
// fill a disk through the log.
const MaxLogValueBytes = 128

// Log returns a caller's value as a log line may carry it: Redacted when it
// holds a credential (judged on the whole value, so a cut cannot hide a
// token's shape), otherwise cut to MaxLogValueBytes.
func (x *Redactor) Log(v string) string {
	return cut(x.Value(v))
}

// LogPath is Log for a URL path: only the segments holding a credential
// are replaced, as in the journal, then the path is cut.
func (x *Redactor) LogPath(p string) string {
	return cut(x.Path(p))
}

// cut shortens v to MaxLogValueBytes, ending in "…", on a UTF-8 boundary.
func cut(v string) string {
	if len(v) <= MaxLogValueBytes {
		return v
	}
	return strings.ToValidUTF8(v[:MaxLogValueBytes], "") + "…"
}
