// Package imaging is the media library's image processing: it sniffs uploads, decodes images
// safely, reads and drops their metadata, makes WordPress's sub-sizes, applies the edit route's
// modifiers and encodes the results. It is pure: no I/O but the readers and writers it is
// given, no database, no global state; the media handlers (origin/media) call it.
//
// The flow of an upload:
//
//	mime, err := imaging.Sniff(head)            // by content, never by name
//	info, err := imaging.Probe(data, lim)        // header only: type, size, limits
//	release, err := budget.Acquire(ctx, info.Cost())
//	defer release()
//	clean, err := imaging.Clean(data, mime, lim) // the stored original: no metadata, upright
//	img, err := imaging.DecodeBytes(clean.Data, lim)
//	scaled := imaging.Fit(img, imaging.BigImageThreshold, imaging.BigImageThreshold) // if ScaledDimensions says so
//	sizes := imaging.MakeSizes(img, imaging.WordPressSizes())
//	err = imaging.Encode(w, sizes[i].Image, "", 0)
//
// # Invariants
//
//   - Untrusted bytes never crash the process and never allocate beyond the limits: the byte
//     count is bounded while reading (Limits.MaxBytes), the pixel count is checked from the
//     header before any pixel buffer exists (Limits.MaxPixels), metadata blocks are parsed by
//     bounded readers of this package (every length checked against its block), and every
//     decoder runs under recover. Failures are *Error values of a Kind with a schema code:
//     unsupported type 415-like CodeUnsupported, corrupt CodeInvalid, too large CodeTooLarge,
//     busy CodeUnavailable.
//   - Memory: Budget bounds the working memory of concurrent jobs (EstimateBytes each; by
//     default 1 GiB in all, so at most two 40-megapixel images or seven 12-megapixel photographs
//     at once); a job that finds no room within the wait bound (10 s) is refused as busy.
//   - Nothing read from an upload's metadata is written back but its colour profile: Encode
//     writes pixels and Image.ICC only; Clean removes the metadata blocks (EXIF, XMP, IPTC,
//     comments, text chunks, bytes after the image) and keeps what rendering needs (ICC
//     profiles, JFIF, Adobe colour transform).
//   - Images are upright: Decode applies the EXIF orientation (all eight), so sub-sizes and edits
//     see what a browser shows; Clean re-encodes an upload that is not upright.
//   - Sub-sizes follow WordPress: image_resize_dimensions and wp_constrain_dimensions to the
//     pixel, never upscaled, a size equal to the original (within a pixel) not made, crops
//     centred.
//
// Why not the EXIF library of the stack notes (github.com/dsoprea/go-exif/v3 v3.0.1): it
// allocates a tag's unit count × unit size (up to 4 GiB) before checking it against the EXIF
// block, so a 200-byte EXIF made it allocate 4 GiB here; its panic handlers also re-panic on
// panics that are not errors. The dozen tags WordPress reads are read by meta.go instead.
package imaging
