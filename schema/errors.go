package schema

import (
	"errors"
	"fmt"
)

// Code classifies an error. Each transport maps codes to HTTP statuses in one table.
type Code string

// The closed set of error codes. Anything that is not an *Error counts as CodeInternal.
const (
	CodeInvalid       Code = "invalid"       // the request is malformed or fails validation
	CodeNotFound      Code = "not_found"     // the addressed resource does not exist
	CodeConflict      Code = "conflict"      // the request conflicts with current state (duplicate slug)
	CodeUnauthorized  Code = "unauthorized"  // no credential, or one that does not verify
	CodeForbidden     Code = "forbidden"     // the credential lacks the capability
	CodeTooLarge      Code = "too_large"     // the request body exceeds its limit
	CodeUnsupported   Code = "unsupported"   // the content type or method is not accepted
	CodeRateLimited   Code = "rate_limited"  // a rate limit is exhausted
	CodeUnavailable   Code = "unavailable"   // try again later: retry budget spent, replica behind, origin down
	CodeInternal      Code = "internal"      // a bug or an unexpected failure; details are logged, never shown
	CodeNotReady      Code = "not_ready"     // the tenant's replica has not reached its first checkpoint
	CodeGone          Code = "gone"          // the resource was deleted and may not be deleted again
	CodeNotAllowed    Code = "not_allowed"   // the operation is not supported on this resource
	CodeUnprocessable Code = "unprocessable" // well-formed, but semantically refused (same idempotency key, other body)
	CodePayment       Code = "payment"       // the payment provider declined the payment
	// CodeOutcomeUnknown: the request may or may not have taken effect (an edge's forwarded
	// request timed out after it was sent; the database lost the connection during COMMIT or
	// answered 40003); retrying is safe only for idempotent requests.
	CodeOutcomeUnknown Code = "outcome_unknown"
)

// Error is the error value every layer returns to a transport. Message is safe to show to the
// caller; internal details never go in it.
type Error struct {
	Code    Code
	Message string
	// Field names the offending input field, when there is one.
	Field string
	// CMSCode is the WordPress error code (rest_post_invalid_id…) used on CMS routes. When empty,
	// the CMS transport derives one from Code.
	CMSCode string
	// RetryAfter, in seconds, is sent as Retry-After on 429 and 503 responses.
	RetryAfter int
	// Params carries per-parameter messages for CMS validation errors (data.params).
	Params map[string]string
	// Status overrides the transport's status for Code when non-zero (WordPress's 401-vs-403
	// rule, 410, 501 are decided by the handler that knows the caller).
	Status int
	// TermID names the existing term of a CMS menu_exists error (data.term_id), which WordPress
	// also repeats in the error's additional_data.
	TermID int64
	// DetailData is the data of a parameter's nested error (data.details[param].data), for the
	// validation errors WordPress gives one (rest_invalid_menu_location: the location).
	DetailData map[string]any
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Field)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a CodeInvalid error about one field.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: CodeInvalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// InvalidParam is WordPress's rest_invalid_param about one argument: the message in the error and
// in data.params under the argument's name (a 400 on either interface).
func InvalidParam(name, msg string) *Error {
	return &Error{Code: CodeInvalid, CMSCode: "rest_invalid_param", Field: name, Message: msg, Params: map[string]string{name: msg}}
}

// ErrorCode returns the code of err, or CodeInternal when err is not an *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// AsError returns err as an *Error; any other error becomes an internal error with a generic
// message, so that nothing internal reaches a response body.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: "internal error"}
}

// CommerceError is the commerce interface's error body: the spec's {"error": message} with a
// stable code, the field at fault and the request's id.
type CommerceError struct {
	// Error says what went wrong, in words (the spec's messages word for word).
	Error string `json:"error"`
	// Code is the stable token of the failure (invalid, not_found, unauthorized, …).
	Code string `json:"code"`
	// Field names the request field at fault, when one is.
	Field string `json:"field,omitempty"`
	// RequestID is the request's id, also in the X-Request-Id header.
	RequestID string `json:"request_id"`
}
