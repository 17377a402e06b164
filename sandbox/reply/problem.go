// Package reply is how every flow of the sandbox answers a request:
// problem+json bodies (RFC 9457), JSON bodies, and the answers to a
// failure of the sandbox's own state. It sits below the flows so that each
// answers an error in the same words and shape.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package reply

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// ContentType is the media type of every error body (RFC 9457).
const ContentType = "application/problem+json"

// typePrefix starts every problem type URN. URNs rather than URLs
// because the sandbox has no documentation host the types could point at, and
// RFC 9457 only requires a URI.
const typePrefix = "urn:referrals-sandbox:problem:"

// Problem types, one per status code the sandbox answers with an error.
const (
	// TypeBadRequest: the body is not well-formed JSON or a value has
	// the wrong JSON type (400).
	TypeBadRequest = typePrefix + "bad-request"
	// TypeValidationFailed: the body is well-formed but field values
	// break the rules; the errors member lists every field at fault (422).
	TypeValidationFailed = typePrefix + "validation-failed"
	// TypeNotFound: no such resource (404).
	TypeNotFound = typePrefix + "not-found"
	// TypeMethodNotAllowed: the path exists but not with this method (405).
	TypeMethodNotAllowed = typePrefix + "method-not-allowed"
	// TypeConflict: the resource already exists (409).
	TypeConflict = typePrefix + "conflict"
	// TypePayloadTooLarge: the body is over the size limit (413).
	TypePayloadTooLarge = typePrefix + "payload-too-large"
	// TypeUnsupportedMediaType: the body is not declared as JSON (415).
	TypeUnsupportedMediaType = typePrefix + "unsupported-media-type"
	// TypeUnauthorized: the access token is missing, invalid or expired (401).
	TypeUnauthorized = typePrefix + "unauthorized"
	// TypeForbidden: the token is valid but lacks the permission (403).
	TypeForbidden = typePrefix + "forbidden"
	// TypeRateLimited: too many requests (429).
	TypeRateLimited = typePrefix + "rate-limited"
	// TypeInternalError: the sandbox failed (500).
	TypeInternalError = typePrefix + "internal-error"
	// TypeUnavailable: the service is (simulated to be) unavailable (503).
	TypeUnavailable = typePrefix + "unavailable"
	// TypeQuotaExceeded: the write would take the client beyond its
	// store quota (serve --quota-records, --quota-bytes); nothing was
	// stored (507). Sandbox-only: the real service documents no such
	// limit, and 507 is a status partners' retry policies do not retry.
	TypeQuotaExceeded = typePrefix + "quota-exceeded"
)

// Problem is an RFC 9457 problem details body.
type Problem struct {
	// Type is one of the ProblemType* URNs.
	Type string `json:"type"`
	// Title is the standard text of Status.
	Title string `json:"title"`
	// Status repeats the HTTP status code.
	Status int `json:"status"`
	// Detail explains this occurrence in words meant for the developer.
	Detail string `json:"detail,omitempty"`
	// Instance is the request path the problem occurred on.
	Instance string `json:"instance,omitempty"`
	// TraceID is the request id, so a partner can quote it when reporting.
	TraceID string `json:"traceId,omitempty"`
	// Errors lists every invalid field; set for validation failures and
	// wrong JSON types.
	Errors []FieldError `json:"errors,omitempty"`
}

// FieldError is one invalid field of a request body.
type FieldError struct {
	// Field is the dotted path of the field, e.g. patient.dateOfBirth or
	// conditions[0].code.
	Field string `json:"field"`
	// Message says what is wrong, without repeating the field name.
	Message string `json:"message"`
}

// problemType returns the type URN of an HTTP status, or about:blank (which
// RFC 9457 defines as "nothing beyond the status code") for other statuses.
func typeOf(status int) string {
	switch status {
	case http.StatusBadRequest:
		return TypeBadRequest
	case http.StatusUnprocessableEntity:
		return TypeValidationFailed
	case http.StatusNotFound:
		return TypeNotFound
	case http.StatusMethodNotAllowed:
		return TypeMethodNotAllowed
	case http.StatusConflict:
		return TypeConflict
	case http.StatusRequestEntityTooLarge:
		return TypePayloadTooLarge
	case http.StatusUnsupportedMediaType:
		return TypeUnsupportedMediaType
	case http.StatusUnauthorized:
		return TypeUnauthorized
	case http.StatusForbidden:
		return TypeForbidden
	case http.StatusTooManyRequests:
		return TypeRateLimited
	case http.StatusInternalServerError:
		return TypeInternalError
	case http.StatusServiceUnavailable:
		return TypeUnavailable
	case http.StatusInsufficientStorage:
		return TypeQuotaExceeded
	default:
		return "about:blank"
	}
}

// New returns the problem for status with its type and title filled
// in. The caller adds Instance and TraceID with ForRequest.
func New(status int, detail string) Problem {
	return Problem{
		Type:   typeOf(status),
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
	}
}

// Validation returns the 422 problem listing every invalid field.
func Validation(errs []FieldError) Problem {
	p := New(http.StatusUnprocessableEntity, fmt.Sprintf("%d field(s) failed validation; see errors", len(errs)))
	p.Errors = errs
	return p
}

// ForRequest returns p with Instance set to the request's path and TraceID
// to the request id.
func (p Problem) ForRequest(r *http.Request, traceID string) Problem {
	p.Instance = r.URL.EscapedPath()
	p.TraceID = traceID
	return p
}

// Write writes p as an application/problem+json response. Missing
// status, type or title are filled in so a half-built problem still yields a
// well-formed body.
func Write(w http.ResponseWriter, p Problem) {
	if p.Status == 0 {
		p.Status = http.StatusInternalServerError
	}
	if p.Type == "" {
		p.Type = typeOf(p.Status)
	}
	if p.Title == "" {
		p.Title = http.StatusText(p.Status)
	}
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	// The status line is already sent; an encoding error here means the
	// client went away, and there is nobody left to tell.
	_ = json.NewEncoder(w).Encode(p)
}

// RequestError is an error caused by the request (not by the sandbox),
// carrying the problem the handler should answer with.
type RequestError struct {
	Problem Problem
}

// Error describes the problem in one line, for logs.
func (e *RequestError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Problem.Status, e.Problem.Title, e.Problem.Detail)
}

// NewRequestError returns a RequestError for status with detail.
func NewRequestError(status int, detail string) *RequestError {
	return &RequestError{Problem: New(status, detail)}
}

// QuotaDetail explains a 507: what filled up, that nothing changed, and
// how the room comes back. It names no figure of the client's usage, which
// the sandbox's log does not need either.
const QuotaDetail = "this client's records and audit trails fill its store quota (serve --quota-records, --quota-bytes); " +
	"nothing was stored or changed, and reads that record a view are refused too. Resetting the client " +
	"(POST /__sandbox/reset with its clientId) frees the room"

// For returns the problem to answer err with: the request's own
// problem for a RequestError, otherwise a 500 that does not leak the
// internal error's text to the partner.
func For(err error) Problem {
	var re *RequestError
	if errors.As(err, &re) {
		return re.Problem
	}
	if errors.Is(err, store.ErrQuota) {
		return New(http.StatusInsufficientStorage, QuotaDetail)
	}
	if errors.Is(err, store.ErrCorrupt) {
		return New(http.StatusInternalServerError, "this record is stored in a form the sandbox can no longer read (a damaged or hand-edited data file); the trace id identifies it in the sandbox log")
	}
	if errors.Is(err, journal.ErrCorrupt) {
		return New(http.StatusInternalServerError, "the request journal holds an entry the sandbox cannot read (written under its keys by something else); clearing the journal (DELETE /__sandbox/requests) removes it")
	}
	return New(http.StatusInternalServerError, "the sandbox failed to process the request; the trace id identifies it in the sandbox log")
}
