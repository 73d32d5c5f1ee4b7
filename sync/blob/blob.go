// Package blob stores immutable files (media originals and sub-sizes now, edge snapshots later)
// by name, behind one interface with two real back ends: a directory of the local filesystem
// (development, and machines sharing a disk) and a JetStream object store bucket (production:
// NATS is already replicated to every region and mirrored to leaf nodes, so edges need no other
// distributed system; ARCHITECTURE decision 20).
//
// # Invariants
//
//   - A Put is all or nothing: a reader never sees part of an object, and a failed or cancelled
//     Put leaves no object under the name (nor a partial file on disk).
//   - Objects are immutable once written: a Put over an existing name with the same bytes
//     succeeds (the uploader's retry); the store never serves bytes other than those whose
//     digest Info reports.
//   - Names are relative slash-separated paths of safe segments (ValidName); a name can never
//     reach outside the store (no "..", no absolute path, no backslash, no NUL).
//   - Open streams: neither back end reads a whole object into memory to serve it.
package blob

import (
	"context"
	"errors"
	"io"
	"time"
)

// ErrNotFound is returned (wrapped or not; test with errors.Is) for a name with no object.
var ErrNotFound = errors.New("blob: not found")

// ErrInvalidName is returned for a name ValidName refuses.
var ErrInvalidName = errors.New("blob: invalid name")

// Info describes a stored object.
type Info struct {
	Name string
	// Size is the length in bytes.
	Size int64
	// SHA256 is the hex SHA-256 digest of the bytes, computed by Put.
	SHA256 string
	// ContentType is what the writer declared (Put's contentType).
	ContentType string
	// Modified is when the object was written.
	Modified time.Time
}

// Object is an open stored object, positioned at the offset Open was given. Close it.
type Object interface {
	io.ReadCloser
	// Info describes the object.
	Info() Info
}

// Store is a blob store. Implementations are safe for concurrent use.
type Store interface {
	// Put writes the object name from r, with its declared content type, and returns its Info.
	// It is atomic (see the package invariants).
	Put(ctx context.Context, name, contentType string, r io.Reader) (Info, error)
	// Open opens the object name for reading from byte offset (0 for the whole object; an
	// offset past the end reads nothing). It returns ErrNotFound when there is none.
	Open(ctx context.Context, name string, offset int64) (Object, error)
	// Stat describes the object name, or returns ErrNotFound.
	Stat(ctx context.Context, name string) (Info, error)
	// Delete removes the object name; deleting a missing name is not an error.
	Delete(ctx context.Context, name string) error
}
