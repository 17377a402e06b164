package idp

import (
	"errors"
	"fmt"

	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Bounds on a runtime client's lists and free-form fields. Every role goes
// into each token the client is issued and every field into
// GET /__sandbox/clients, so with MaxRuntimeClients they bound the
// registry's memory, that listing and the size of a token. Real clients
// stay far below: an Entra app role's value is a short dotted name
// (Referrals.Write), an application has a handful of roles and asks for one
// or two resources.
const (
	// MaxClientDescriptionBytes bounds a runtime client's description.
	MaxClientDescriptionBytes = 1024
	// MaxClientRoles bounds a runtime client's roles.
	MaxClientRoles = 64
	// MaxRoleBytes bounds one role.
	MaxRoleBytes = 128
	// MaxClientResources bounds the resources a runtime client may ask
	// tokens for.
	MaxClientResources = 16
	// MaxResourceBytes bounds one resource (an application ID URI).
	MaxResourceBytes = 256
)

// ErrClientTooLarge: a runtime client's field or list is over its bound;
// the wrapped ClientFieldErrors names which.
var ErrClientTooLarge = errors.New("runtime client field over its bound")

// ClientFieldError names a field of a runtime client and what is wrong
// with it, e.g. {"roles[3]", "200 bytes; at most 128"}.
type ClientFieldError struct {
	Field   string
	Message string
}

// ClientFieldErrors are every bound a runtime client breaks. As an error it
// wraps ErrClientTooLarge.
type ClientFieldErrors []ClientFieldError

// Error lists the fields as "field: message; ...".
func (e ClientFieldErrors) Error() string {
	msg := ErrClientTooLarge.Error()
	for i, f := range e {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		msg += sep + f.Field + ": " + f.Message
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrClientTooLarge) hold.
func (e ClientFieldErrors) Unwrap() error { return ErrClientTooLarge }

// CheckClientBounds returns every bound c breaks, nil when none. A list
// over its count is reported once, without checking its items, so the
// answer stays small whatever was sent.
func CheckClientBounds(c referrals.Client) ClientFieldErrors {
	var errs ClientFieldErrors
	add := func(field, format string, args ...any) {
		errs = append(errs, ClientFieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if n := len(c.Description); n > MaxClientDescriptionBytes {
		add("description", "%d bytes; at most %d", n, MaxClientDescriptionBytes)
	}
	checkList := func(field string, items []string, maxItems, maxBytes int) {
		if len(items) > maxItems {
			add(field, "%d items; at most %d", len(items), maxItems)
			return
		}
		for i, it := range items {
			if len(it) > maxBytes {
				add(fmt.Sprintf("%s[%d]", field, i), "%d bytes; at most %d", len(it), maxBytes)
			}
		}
	}
	checkList("roles", c.Roles, MaxClientRoles, MaxRoleBytes)
	checkList("resources", c.Resources, MaxClientResources, MaxResourceBytes)
	return errs
}
