// Package blob stores immutable files (media originals and sub-sizes now, edge snapshots later)
// by name, behind one interface with two real back ends: a directory of the local filesystem
// (FS: development, and machines sharing a disk) and a JetStream object store bucket
// (ObjectStore: production, where NATS is already replicated to every region and reaches edges
// through leaf nodes, so edges need no other distributed system; ARCHITECTURE decision 20).
//
// # Invariants
//
//   - A Put is all or nothing: a reader never sees part of an object, and a failed or cancelled
//     Put leaves no object under the name, nor a partial file on disk or chunks in the bucket
//     (a crash of the writing process can leave unreferenced bytes, never a visible object).
//   - Objects are immutable once written. A Put over an existing name with the same bytes and
//     content type succeeds and returns the stored object's Info (the uploader's retry; nothing
//     is rewritten); with other bytes or another content type it fails with ErrExists, also
//     when the two Puts race. The store never serves bytes other than those whose digest Info
//     reports, and never replaces an object under a reader.
//   - Names are relative slash-separated paths of safe segments (ValidName); a name can never
//     reach outside the store (no "..", no absolute path, no backslash, no NUL).
//   - Open streams: neither back end reads a whole object into memory to serve it. FS reads
//     from the file; ObjectStore holds at most its read-ahead (ObjectStoreConfig.ReadAhead) of
//     chunks per open object.
//
// Names are the users' business: the objects are content-addressed by their users
// (schema.MediaBlobName), so the same name always carries the same bytes.
package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrNotFound is returned (wrapped or not; test with errors.Is) for a name with no object.
var ErrNotFound = errors.New("blob: not found")

// ErrInvalidName is returned for a name ValidName refuses.
var ErrInvalidName = errors.New("blob: invalid name")

// ErrExists is returned by Put for a name that holds other bytes (or the same bytes with
// another content type): objects are immutable.
var ErrExists = errors.New("blob: name holds another object")

// ErrNoSpace is returned (joined with the cause) by a Put refused for want of space: a full
// disk or quota for FS, the bucket's MaxBytes or the server's storage limit for ObjectStore.
// Nothing of the Put is kept.
var ErrNoSpace = errors.New("blob: no space left")

// ErrInvalidContentType is returned by Put for a content type longer than MaxContentTypeLen or
// holding a byte outside printable ASCII (it becomes a response header as is).
var ErrInvalidContentType = errors.New("blob: invalid content type")

// Limits of names and content types.
const (
	// MaxNameLen is the longest name in bytes.
	MaxNameLen = 512
	// MaxSegmentLen is the longest segment of a name in bytes (a filesystem file name, with
	// FS's suffixes, stays under the usual 255).
	MaxSegmentLen = 200
	// MaxContentTypeLen is the longest content type in bytes.
	MaxContentTypeLen = 255
	// DefaultContentType is stored for an empty content type.
	DefaultContentType = "application/octet-stream"
)

// Info describes a stored object.
type Info struct {
	Name string
	// Size is the length in bytes.
	Size int64
	// SHA256 is the hex SHA-256 digest of the bytes, computed by Put.
	SHA256 string
	// ContentType is what the writer declared (Put's contentType; DefaultContentType for "").
	ContentType string
	// Modified is when the object was written (UTC), as the writer's clock said.
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
	// It is atomic and never replaces an object: see the package invariants (ErrExists). ctx is
	// checked between reads of r: a cancelled Put returns ctx's error and leaves nothing.
	Put(ctx context.Context, name, contentType string, r io.Reader) (Info, error)
	// Open opens the object name for reading from byte offset (0 for the whole object; an
	// offset past the end reads nothing). It returns ErrNotFound when there is none. ctx bounds
	// the opening; the Object lives until Close (a network back end bounds each read with its
	// own timeout, so a vanished object ends a read with an error, never a hang).
	Open(ctx context.Context, name string, offset int64) (Object, error)
	// Stat describes the object name, or returns ErrNotFound.
	Stat(ctx context.Context, name string) (Info, error)
	// Delete removes the object name; deleting a missing name is not an error.
	Delete(ctx context.Context, name string) error
	// Walk calls fn with the Info of every object whose name starts with prefix ("" for all;
	// a plain string prefix, not only whole segments), in no particular order, and stops at
	// fn's first error, which it returns. fn may Delete objects (a sweeper of orphan uploads
	// does). Objects put or deleted during the walk may or may not be seen.
	Walk(ctx context.Context, prefix string, fn func(Info) error) error
}

// ValidName returns nil when name can name an object, else an error wrapping ErrInvalidName: a
// relative slash-separated path of at most MaxNameLen bytes whose segments are non-empty, at
// most MaxSegmentLen bytes, made of ASCII letters, digits, '.', '_' and '-', and neither "." nor
// "..". So no leading or doubled slash, no backslash, no NUL, no space, no non-ASCII letter.
func ValidName(name string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidName, truncate(name), why) }
	if name == "" {
		return bad("empty")
	}
	if len(name) > MaxNameLen {
		return bad(fmt.Sprintf("longer than %d bytes", MaxNameLen))
	}
	start := 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '/' {
			c := name[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
				return bad(fmt.Sprintf("byte %q not allowed", c))
			}
			continue
		}
		seg := name[start:i]
		switch {
		case seg == "":
			return bad("empty segment")
		case seg == "." || seg == "..":
			return bad("segment " + seg)
		case len(seg) > MaxSegmentLen:
			return bad(fmt.Sprintf("segment longer than %d bytes", MaxSegmentLen))
		}
		start = i + 1
	}
	return nil
}

// truncate shortens a refused name for an error message.
func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// checkContentType returns the content type to store for ct.
func checkContentType(ct string) (string, error) {
	if ct == "" {
		return DefaultContentType, nil
	}
	if len(ct) > MaxContentTypeLen {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrInvalidContentType, MaxContentTypeLen)
	}
	for i := 0; i < len(ct); i++ {
		if ct[i] < 0x20 || ct[i] > 0x7e {
			return "", fmt.Errorf("%w: byte %q", ErrInvalidContentType, ct[i])
		}
	}
	return ct, nil
}

// matchExisting reads r to its end and returns existing when r holds the same bytes with the
// same content type: the retry of a Put that already landed. Otherwise it returns ErrExists.
func matchExisting(ctx context.Context, existing Info, contentType string, r io.Reader) (Info, error) {
	h := sha256.New()
	n, err := io.Copy(h, ctxReader{ctx, r})
	if err != nil {
		return Info{}, err
	}
	if n == existing.Size && hex.EncodeToString(h.Sum(nil)) == existing.SHA256 && contentType == existing.ContentType {
		return existing, nil
	}
	return Info{}, fmt.Errorf("%w: %s", ErrExists, existing.Name)
}

// same reports whether two puts of a name carried the same object.
func same(a, b Info) bool {
	return a.Size == b.Size && a.SHA256 == b.SHA256 && a.ContentType == b.ContentType
}

// ctxReader is r that fails with ctx's error once ctx is done (checked before each read).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// walkPrefixDir returns the directory part of a Walk prefix (up to its last slash) and whether
// a valid name can start with prefix at all.
func walkPrefixDir(prefix string) (dir string, ok bool) {
	i := strings.LastIndexByte(prefix, '/')
	if i < 0 {
		return "", true
	}
	dir = prefix[:i]
	return dir, ValidName(dir) == nil
}
