package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// FS is a Store in a directory of the local filesystem.
//
// The object name "a/b/c.jpg" is the file <root>/a/b/c.jpg~. The file starts with a header of
// headerSize bytes (a magic line, then one JSON line with the size, SHA-256, content type and
// modification time, padded with spaces) followed by the object's bytes, so Stat reads one
// small block and Open seeks past the header to the offset: nothing is ever reread to be
// described. The header lives in the data file, not in a sidecar, so that one filesystem
// operation commits the object: there is no state where the bytes and their description
// disagree, and nothing to reconcile after a crash.
//
// The '~' suffix (a byte names may not hold) keeps object files apart from directories, so
// "a/b" and "a/b/c" can both exist, as in the object store. Put writes a temporary file
// ("c.jpg~<random>.tmp") in the target directory, fsyncs it and hard-links it into place:
// link(2) fails when the name exists, so two racing Puts cannot replace each other's object
// (rename would, silently), and the loser compares digests (same bytes: success; other bytes:
// ErrExists). The temporary file is then removed and the directory fsynced. A crash can leave a
// "*.tmp" file behind (never an object); removing them is safe when no Put runs.
//
// Directories emptied by Delete are kept (names are content-addressed and their directories
// reused). On a case-insensitive filesystem (macOS by default) names differing only in case
// collide: use FS there for development only.
type FS struct {
	root string
}

const (
	// headerSize is the length of an object file's header.
	headerSize = 1024
	// fsMagic starts every object file.
	fsMagic = "VITRINE-BLOB/1\n"
	// objectSuffix ends an object file's name; the temporary files hold it, then a random part
	// and tmpSuffix.
	objectSuffix = "~"
	tmpSuffix    = ".tmp"
)

// fsHeader is the JSON line of an object file's header.
type fsHeader struct {
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	ContentType string    `json:"content_type"`
	Modified    time.Time `json:"modified"`
}

// NewFS returns the store in directory dir, creating it when missing.
func NewFS(dir string) (*FS, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	return &FS{root: abs}, nil
}

// Root is the store's directory.
func (f *FS) Root() string { return f.root }

// file is the object file of a valid name.
func (f *FS) file(name string) string {
	return filepath.Join(f.root, filepath.FromSlash(name)) + objectSuffix
}

// Put implements Store.
func (f *FS) Put(ctx context.Context, name, contentType string, r io.Reader) (Info, error) {
	if err := ValidName(name); err != nil {
		return Info{}, err
	}
	ct, err := checkContentType(contentType)
	if err != nil {
		return Info{}, err
	}
	if existing, err := f.Stat(ctx, name); err == nil {
		return matchExisting(ctx, existing, ct, r)
	} else if !errors.Is(err, ErrNotFound) {
		return Info{}, err
	}
	final := f.file(name)
	dir := filepath.Dir(final)
	if err := f.mkdirs(dir); err != nil {
		return Info{}, err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(final)+"*"+tmpSuffix)
	if err != nil {
		return Info{}, fmt.Errorf("blob: put %s: %w", name, err)
	}
	defer os.Remove(tmp.Name()) // after the link, or on failure
	info, err := writeObject(ctx, tmp, name, ct, r)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil {
		err = ctx.Err() // cancelled after the last read: still nothing committed
	}
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
			return Info{}, fmt.Errorf("blob: put %s: %w: %w", name, ErrNoSpace, err)
		}
		return Info{}, fmt.Errorf("blob: put %s: %w", name, err)
	}
	if err := os.Link(tmp.Name(), final); err != nil {
		if errors.Is(err, fs.ErrExist) { // a racing Put committed first
			existing, serr := f.Stat(ctx, name)
			if serr != nil {
				return Info{}, serr
			}
			if same(existing, info) {
				return existing, nil
			}
			return Info{}, fmt.Errorf("%w: %s", ErrExists, name)
		}
		return Info{}, fmt.Errorf("blob: put %s: %w", name, err)
	}
	if err := syncDir(dir); err != nil {
		return Info{}, fmt.Errorf("blob: put %s: %w", name, err)
	}
	return info, nil
}

// writeObject writes the header and r's bytes to the temporary file t, and fsyncs it.
func writeObject(ctx context.Context, t *os.File, name, ct string, r io.Reader) (Info, error) {
	if _, err := t.Seek(headerSize, io.SeekStart); err != nil {
		return Info{}, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(t, h), ctxReader{ctx, r})
	if err != nil {
		return Info{}, err
	}
	info := Info{Name: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil)), ContentType: ct, Modified: time.Now().UTC()}
	hdr, err := encodeHeader(info)
	if err != nil {
		return Info{}, err
	}
	if _, err := t.WriteAt(hdr, 0); err != nil {
		return Info{}, err
	}
	return info, t.Sync()
}

// encodeHeader returns the header block of an object file.
func encodeHeader(info Info) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(fsMagic)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fsHeader{Size: info.Size, SHA256: info.SHA256, ContentType: info.ContentType, Modified: info.Modified}); err != nil {
		return nil, err
	}
	if b.Len() > headerSize {
		return nil, fmt.Errorf("header of %d bytes exceeds %d", b.Len(), headerSize)
	}
	out := b.Bytes()
	out = append(out, bytes.Repeat([]byte{' '}, headerSize-len(out))...)
	return out, nil
}

// decodeHeader parses the header block of an object file.
func decodeHeader(b []byte) (fsHeader, error) {
	var h fsHeader
	if len(b) != headerSize || !bytes.HasPrefix(b, []byte(fsMagic)) {
		return h, errors.New("not an object file")
	}
	line, _, ok := bytes.Cut(b[len(fsMagic):], []byte{'\n'})
	if !ok {
		return h, errors.New("header line not terminated")
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return h, fmt.Errorf("header: %w", err)
	}
	if h.Size < 0 || len(h.SHA256) != 64 {
		return h, errors.New("header: bad size or digest")
	}
	return h, nil
}

// open opens the object file of name and reads its header.
func (f *FS) open(ctx context.Context, name string) (*os.File, Info, error) {
	if err := ValidName(name); err != nil {
		return nil, Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, Info{}, err
	}
	file, err := os.Open(f.file(name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Info{}, fmt.Errorf("%w: %s", ErrNotFound, name)
		}
		return nil, Info{}, fmt.Errorf("blob: %w", err)
	}
	info, err := readInfo(file, name)
	if err != nil {
		file.Close()
		return nil, Info{}, err
	}
	return file, info, nil
}

// readInfo reads the header of an open object file and checks it against the file's length.
func readInfo(file *os.File, name string) (Info, error) {
	var buf [headerSize]byte
	if _, err := io.ReadFull(io.NewSectionReader(file, 0, headerSize), buf[:]); err != nil {
		return Info{}, fmt.Errorf("blob: %s: %w", name, err)
	}
	h, err := decodeHeader(buf[:])
	if err != nil {
		return Info{}, fmt.Errorf("blob: %s: %w", name, err)
	}
	st, err := file.Stat()
	if err != nil {
		return Info{}, fmt.Errorf("blob: %w", err)
	}
	if st.Size() != headerSize+h.Size {
		return Info{}, fmt.Errorf("blob: %s: file of %d bytes for an object of %d", name, st.Size(), h.Size)
	}
	return Info{Name: name, Size: h.Size, SHA256: h.SHA256, ContentType: h.ContentType, Modified: h.Modified.UTC()}, nil
}

// Stat implements Store.
func (f *FS) Stat(ctx context.Context, name string) (Info, error) {
	file, info, err := f.open(ctx, name)
	if err != nil {
		return Info{}, err
	}
	file.Close()
	return info, nil
}

// Open implements Store. The object reads the file from its position: an open object keeps
// reading its bytes even if the name is deleted meanwhile.
func (f *FS) Open(ctx context.Context, name string, offset int64) (Object, error) {
	if offset < 0 {
		return nil, fmt.Errorf("blob: negative offset %d", offset)
	}
	file, info, err := f.open(ctx, name)
	if err != nil {
		return nil, err
	}
	offset = min(offset, info.Size)
	if _, err := file.Seek(headerSize+offset, io.SeekStart); err != nil {
		file.Close()
		return nil, fmt.Errorf("blob: %w", err)
	}
	return &fsObject{file: file, info: info}, nil
}

// fsObject is an open object file positioned in its bytes. It exposes no Seek or ReadAt, which
// would reach the header; WriteTo lets io.Copy use the file's own (sendfile on Linux).
type fsObject struct {
	file *os.File
	info Info
}

func (o *fsObject) Read(p []byte) (int, error)         { return o.file.Read(p) }
func (o *fsObject) WriteTo(w io.Writer) (int64, error) { return o.file.WriteTo(w) }
func (o *fsObject) Close() error                       { return o.file.Close() }
func (o *fsObject) Info() Info                         { return o.info }

// File returns the open file, positioned at the object's read offset, so that a server can send
// it with sendfile(2) (edge/files.FileObject). Closing the object closes it.
func (o *fsObject) File() *os.File { return o.file }

// Delete implements Store.
func (f *FS) Delete(ctx context.Context, name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Remove(f.file(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob: %w", err)
	}
	return nil
}

// Walk implements Store. It reads the directories under the prefix's directory part only, and
// each object's header.
func (f *FS) Walk(ctx context.Context, prefix string, fn func(Info) error) error {
	dir, ok := walkPrefixDir(prefix)
	if !ok {
		return nil
	}
	start := f.root
	if dir != "" {
		start = filepath.Join(f.root, filepath.FromSlash(dir))
	}
	err := filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // the start directory is missing, or an entry went away
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(f.root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != start && !strings.HasPrefix(rel+"/", prefix) {
				return filepath.SkipDir
			}
			return nil
		}
		name, isObject := strings.CutSuffix(rel, objectSuffix)
		if !isObject || !d.Type().IsRegular() || !strings.HasPrefix(name, prefix) || ValidName(name) != nil {
			return nil // temporary files and anything not put here
		}
		file, err := os.Open(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted meanwhile
			}
			return fmt.Errorf("blob: %w", err)
		}
		info, err := readInfo(file, name)
		file.Close()
		if err != nil {
			return err
		}
		return fn(info)
	})
	return err
}

// mkdirs creates dir and its missing parents under the root, fsyncing each parent whose
// entries changed, so that a committed object's path survives a crash.
func (f *FS) mkdirs(dir string) error {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	for d := dir; d != f.root && strings.HasPrefix(d, f.root); d = filepath.Dir(d) {
		if err := syncDir(filepath.Dir(d)); err != nil {
			return fmt.Errorf("blob: %w", err)
		}
	}
	return nil
}

// syncDir fsyncs a directory, making the entries made in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
