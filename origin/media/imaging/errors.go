package imaging

import (
	"errors"

	"vitrine/schema"
)

// Kind classifies an imaging error. Each kind has a schema code, so a transport maps it without a
// table of its own (schema.AsError finds it through Error.As).
type Kind int

// The kinds of imaging errors.
const (
	// KindUnsupported: the content is of a type this package refuses (by sniffing, not by name),
	// or an image feature no decoder here reads (animated WebP). schema.CodeUnsupported.
	KindUnsupported Kind = iota + 1
	// KindCorrupt: the content claims a supported type but does not decode (truncated, malformed).
	// schema.CodeInvalid.
	KindCorrupt
	// KindTooLarge: more bytes than Limits.MaxBytes or more pixels than Limits.MaxPixels, found
	// before any pixel buffer is allocated. schema.CodeTooLarge.
	KindTooLarge
	// KindInvalidEdit: an edit modifier is out of range (a crop outside 0..100 %, an empty box).
	// schema.CodeInvalid.
	KindInvalidEdit
	// KindBusy: the memory Budget had no room within its wait bound. schema.CodeUnavailable with
	// a Retry-After.
	KindBusy
)

// Sentinels, one per kind, for errors.Is: errors.Is(err, imaging.ErrCorrupt) holds for every
// error of that kind.
var (
	ErrUnsupported = &Error{Kind: KindUnsupported, Message: "unsupported file type"}
	ErrCorrupt     = &Error{Kind: KindCorrupt, Message: "the image cannot be decoded"}
	ErrTooLarge    = &Error{Kind: KindTooLarge, Message: "the image is too large"}
	ErrInvalidEdit = &Error{Kind: KindInvalidEdit, Message: "invalid image edit"}
	ErrBusy        = &Error{Kind: KindBusy, Message: "image processing is busy, try again later"}
)

// busyRetryAfter is the Retry-After, in seconds, of a KindBusy error.
const busyRetryAfter = 5

// Error is every error this package returns. Message is safe to show to a caller; Err, when set,
// is the underlying decoder's error (for logs).
type Error struct {
	Kind    Kind
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return "imaging: " + e.Message + ": " + e.Err.Error()
	}
	return "imaging: " + e.Message
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && (t == ErrUnsupported || t == ErrCorrupt || t == ErrTooLarge || t == ErrInvalidEdit || t == ErrBusy)
}

// Code returns the schema code of e's kind.
func (e *Error) Code() schema.Code {
	switch e.Kind {
	case KindUnsupported:
		return schema.CodeUnsupported
	case KindCorrupt, KindInvalidEdit:
		return schema.CodeInvalid
	case KindTooLarge:
		return schema.CodeTooLarge
	case KindBusy:
		return schema.CodeUnavailable
	}
	return schema.CodeInternal
}

// As lets errors.As (and so schema.AsError) see an *Error as a *schema.Error with its code and
// message; a busy error carries a Retry-After.
func (e *Error) As(target any) bool {
	t, ok := target.(**schema.Error)
	if !ok {
		return false
	}
	se := &schema.Error{Code: e.Code(), Message: e.Message}
	if e.Kind == KindBusy {
		se.RetryAfter = busyRetryAfter
	}
	*t = se
	return true
}

func newError(k Kind, msg string, err error) *Error { return &Error{Kind: k, Message: msg, Err: err} }

// KindOf returns the kind of err, or 0 when err is not from this package.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
