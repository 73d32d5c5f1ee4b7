package media

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"vitrine/origin/media/imaging"
	"vitrine/schema"
)

// stored is what an upload or an edit stores: the original and, for images, the "-scaled" copy
// (WordPress's big-image threshold) and the sub-sizes made.
type stored struct {
	mime string
	// orig is the stored original: an image without its metadata, upright; another file as
	// uploaded.
	orig         []byte
	origW, origH int
	// scaled is the "-scaled" copy, which becomes the attachment's file (nil when none).
	scaled           []byte
	scaledW, scaledH int
	sizes            []madeSize
	// meta is the image_meta read before the metadata was dropped (images only).
	meta imaging.ImageMeta
	// complete: every sub-size due was made (or none was asked for).
	complete bool
}

// madeSize is one sub-size made.
type madeSize struct {
	name string
	w, h int
	data []byte
}

// prepare processes the bytes of an upload of the sniffed type mime. Images are probed (type,
// dimensions, limits) before anything is decoded, processed under the memory budget, cleaned
// (imaging.Clean), decoded whole (a corrupt image is refused here, not stored), and, when
// generate is set, scaled and cut into sub-sizes until deadline. Other files are stored as
// they came.
func (s *Service) prepare(ctx context.Context, data []byte, mime string, generate bool, deadline time.Time) (*stored, error) {
	st := &stored{mime: mime, complete: true}
	if !imaging.IsImage(mime) {
		st.orig = data
		return st, nil
	}
	lim := s.limits()
	info, err := imaging.Probe(data, lim)
	if err != nil {
		return nil, err
	}
	release, err := s.cfg.Budget.Acquire(ctx, info.Cost())
	if err != nil {
		return nil, err
	}
	defer release()
	cl, err := imaging.Clean(data, mime, lim)
	if err != nil {
		return nil, err
	}
	img, err := imaging.DecodeBytes(cl.Data, lim)
	if err != nil {
		return nil, err
	}
	st.orig, st.origW, st.origH, st.meta = cl.Data, img.Width(), img.Height(), cl.Meta
	if generate {
		if err := st.derive(img, deadline); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// prepareEdited is prepare for the pixels of an edit, encoded in the source's type.
func prepareEdited(img *imaging.Image, mime string, meta imaging.ImageMeta, deadline time.Time) (*stored, error) {
	var buf bytes.Buffer
	if err := imaging.Encode(&buf, img, mime, 0); err != nil {
		return nil, err
	}
	st := &stored{mime: mime, orig: buf.Bytes(), origW: img.Width(), origH: img.Height(), meta: meta, complete: true}
	if err := st.derive(img, deadline); err != nil {
		return nil, err
	}
	return st, nil
}

// derive makes the "-scaled" copy when the image is over the big-image threshold (always: it
// becomes the attachment's file), then the sub-sizes from it until deadline.
func (st *stored) derive(img *imaging.Image, deadline time.Time) error {
	src := img
	if w, h, ok := imaging.ScaledDimensions(img.Width(), img.Height(), st.mime); ok {
		src = imaging.Resize(img, w, h)
		var buf bytes.Buffer
		if err := imaging.Encode(&buf, src, st.mime, 0); err != nil {
			return err
		}
		st.scaled, st.scaledW, st.scaledH = buf.Bytes(), w, h
	}
	st.sizes, st.complete = makeSizes(src, st.mime, st.origW, st.origH, nil, deadline)
	return nil
}

// makeSizes makes the WordPress sub-sizes of an image whose original is origW×origH that have
// lacks (judged on the original, as WordPress's wp_get_missing_image_subsizes; made from src,
// the attachment's file), in WordPress's order, until deadline. It reports whether every one due
// was made.
func makeSizes(src *imaging.Image, mime string, origW, origH int, have map[string]schema.AttachmentSize, deadline time.Time) ([]madeSize, bool) {
	var out []madeSize
	for _, size := range imaging.WordPressSizes() {
		if _, ok := have[size.Name]; ok {
			continue
		}
		if _, ok := imaging.Dimensions(origW, origH, size); !ok {
			continue
		}
		if !time.Now().Before(deadline) {
			return out, false
		}
		made := imaging.MakeSizes(src, []imaging.Size{size})
		if len(made) == 0 {
			continue // within a pixel of the file itself
		}
		var buf bytes.Buffer
		if err := imaging.Encode(&buf, made[0].Image, mime, 0); err != nil {
			return out, false
		}
		out = append(out, madeSize{name: size.Name, w: made[0].Image.Width(), h: made[0].Image.Height(), data: buf.Bytes()})
	}
	return out, true
}

// naming composes the content-addressed names of an attachment's files (schema/attachment.go):
// "<dir>/<stem>-<sha12>[-n].<ext>", the scaled copy "…-scaled.<ext>", sub-sizes "…-WxH.<ext>".
type naming struct {
	dir, stem, hash, ext string
}

// newNaming names the files of an original with bytes orig, uploaded at t.
func newNaming(t time.Time, stem, mime string, orig []byte) naming {
	sum := sha256.Sum256(orig)
	return naming{dir: t.UTC().Format("2006/01"), stem: stem, hash: hex.EncodeToString(sum[:6]), ext: imaging.Extension(mime)}
}

// base is the name of candidate n without its extension: n = 1 unsuffixed, then -2, -3…
func (nm naming) base(n int) string {
	b := nm.dir + "/" + nm.stem + "-" + nm.hash
	if n > 1 {
		b += "-" + strconv.Itoa(n)
	}
	return b
}

// blobFile is one file to write: its name under the uploads root, its type and bytes.
type blobFile struct {
	name, mime string
	data       []byte
}

// files lists the files named from base, the original first, then the scaled copy and the
// sub-sizes.
func (st *stored) files(base, ext string) []blobFile {
	out := []blobFile{{name: base + "." + ext, mime: st.mime, data: st.orig}}
	if st.scaled != nil {
		out = append(out, blobFile{name: base + "-scaled." + ext, mime: st.mime, data: st.scaled})
	}
	return append(out, st.sizeFiles(base, ext)...)
}

// sizeFiles lists the files of the sub-sizes (two sizes of the same dimensions share one).
func (st *stored) sizeFiles(base, ext string) []blobFile {
	var out []blobFile
	seen := map[string]bool{}
	for _, z := range st.sizes {
		name := sizeName(base, ext, z.w, z.h)
		if !seen[name] {
			seen[name] = true
			out = append(out, blobFile{name: name, mime: st.mime, data: z.data})
		}
	}
	return out
}

func sizeName(base, ext string, w, h int) string {
	return base + "-" + strconv.Itoa(w) + "x" + strconv.Itoa(h) + "." + ext
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// attachment returns the file facts of the files named from base.
func (st *stored) attachment(base, ext string) *schema.Attachment {
	a := &schema.Attachment{MimeType: st.mime, File: base + "." + ext, Width: st.origW, Height: st.origH,
		FileSize: int64(len(st.orig)), SHA256: digest(st.orig)}
	if imaging.IsImage(st.mime) {
		a.ImageMeta = st.meta.Map()
	}
	if st.scaled != nil {
		a.Original = &schema.AttachmentSize{File: a.File, Width: a.Width, Height: a.Height, MimeType: st.mime, FileSize: a.FileSize, SHA256: a.SHA256}
		a.File, a.Width, a.Height = base+"-scaled."+ext, st.scaledW, st.scaledH
		a.FileSize, a.SHA256 = int64(len(st.scaled)), digest(st.scaled)
	}
	addSizes(a, base, ext, st.sizes)
	return a
}

// addSizes records sub-sizes made for the attachment whose files are named from base.
func addSizes(a *schema.Attachment, base, ext string, sizes []madeSize) {
	if len(sizes) == 0 {
		return
	}
	all := make(map[string]schema.AttachmentSize, len(a.Sizes)+len(sizes))
	for k, v := range a.Sizes {
		all[k] = v
	}
	for _, z := range sizes {
		all[z.name] = schema.AttachmentSize{File: sizeName(base, ext, z.w, z.h), Width: z.w, Height: z.h, MimeType: a.MimeType,
			FileSize: int64(len(z.data)), SHA256: digest(z.data)}
	}
	a.Sizes = all
}

// suffixes of a stored base name: the content hash with WordPress's -n, and the scaled copy's.
var storedSuffix = regexp.MustCompile(`-[0-9a-f]{12}(-[0-9]+)?(-scaled)?$`)

// storedBase returns the base name (without extension) and extension of an attachment's
// original: its files' names derive from it.
func storedBase(a *schema.Attachment) (base, ext string) {
	file := a.File
	if a.Original != nil {
		file = a.Original.File
	}
	ext = path.Ext(file)
	return strings.TrimSuffix(file, ext), strings.TrimPrefix(ext, ".")
}

// stemOfStored returns the stem a stored file was named from ("2026/11/photo-9f86d081884c.jpg"
// → "photo").
func stemOfStored(file string) string {
	name := strings.TrimSuffix(path.Base(file), path.Ext(file))
	if s := storedSuffix.ReplaceAllString(name, ""); s != "" {
		return s
	}
	return name
}
