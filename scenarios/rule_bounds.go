package scenarios

import (
	"strings"
)

// Bounds on a rule's free-form fields. Every request is matched against
// every active rule, and GET /__sandbox/scenarios lists them all, so what
// one rule may hold bounds both the work per request and the size of that
// list. Real rules stay far below: the API's longest path has 6 segments,
// client ids are GUIDs or short names, a description is a sentence.
const (
	// MaxDescriptionBytes bounds a rule's description (and a runtime
	// client's, idp.MaxClientDescriptionBytes): a paragraph, not a file.
	MaxDescriptionBytes = 1024
	// MaxPathBytes bounds a rule's path: twice the journal's cut of a
	// request path, so any path the journal shows whole can be matched.
	MaxPathBytes = 2048
	// MaxPathSegments bounds the segments of a rule's path, and with it the
	// work of matching one rule against a request.
	MaxPathSegments = 32
	// MaxPathWildcards bounds the "*" segments of a rule's path.
	MaxPathWildcards = 8
	// MaxClientIDBytes bounds the client id a rule (or an activation) is
	// bound to. It may name a client the sandbox does not know (to test the
	// token endpoint's refusal), so it is longer than a registered id.
	MaxClientIDBytes = 256
	// MaxMethodBytes bounds a rule's HTTP method.
	MaxMethodBytes = 32
)

// validateBounds checks the sizes of the free-form fields first, before any
// other check walks them.
func (r Rule) validateBounds() error {
	if len(r.Description) > MaxDescriptionBytes {
		return fieldErr("description", "%d bytes; at most %d", len(r.Description), MaxDescriptionBytes)
	}
	if len(r.Method) > MaxMethodBytes {
		return fieldErr("method", "%d bytes; at most %d", len(r.Method), MaxMethodBytes)
	}
	if err := ValidateClientID(r.ClientID); err != nil {
		return err
	}
	return validatePathBounds(r.Path)
}

// ValidateClientID checks the client id a rule or a scenario activation is
// bound to; the error names the field clientId.
func ValidateClientID(id string) error {
	if len(id) > MaxClientIDBytes {
		return fieldErr("clientId", "%d bytes; at most %d", len(id), MaxClientIDBytes)
	}
	return nil
}

// validatePathBounds checks a rule path's length, segments and wildcards.
func validatePathBounds(p string) error {
	if len(p) > MaxPathBytes {
		return fieldErr("path", "%d bytes; at most %d", len(p), MaxPathBytes)
	}
	if n := strings.Count(p, "/"); n > MaxPathSegments {
		return fieldErr("path", "%d segments; at most %d", n, MaxPathSegments)
	}
	wildcards := 0
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "*" {
			wildcards++
		}
	}
	if wildcards > MaxPathWildcards {
		return fieldErr("path", "%d * segments; at most %d", wildcards, MaxPathWildcards)
	}
	return nil
}
