package imaging

import (
	"bytes"
	"encoding/binary"
)

// Cleaned is what Clean returns: the bytes to store as an upload's original.
type Cleaned struct {
	// Data is the image without metadata, upright.
	Data []byte
	// Meta is the image_meta read before the metadata was dropped. Its Orientation is "1" when
	// the pixels were turned upright (as WordPress records after rotating).
	Meta ImageMeta
	// Width and Height are the upright image's.
	Width, Height int
	// Reencoded is true when the pixels were decoded and encoded again (the upload was not
	// upright), false when only metadata blocks were removed.
	Reencoded bool
}

// Clean returns the bytes to store as the original of an upload of an image type (JPEG, PNG,
// GIF, WebP; other types are a KindUnsupported error), without its metadata:
//
//   - Upright uploads (EXIF orientation 1 or none) lose their metadata blocks and nothing else:
//     the image data is copied byte for byte, so no quality is lost. JPEG: APP1 (EXIF, XMP),
//     APP13 (IPTC), COM and the other application segments go; APP0 (JFIF), APP2 ICC profiles
//     and APP14 (Adobe colour transform) stay. PNG: tEXt, zTXt, iTXt, eXIf and tIME chunks go.
//     GIF: comment extensions and application extensions other than the animation loop go.
//     WebP: the EXIF and XMP chunks go, and their flags in VP8X.
//   - Uploads that are not upright are decoded, turned upright and encoded again in their own
//     type (WordPress's "-rotated" image), at DefaultQuality.
//
// Clean checks the limits and the headers; only the re-encoding path decodes the pixels, so a
// file whose image data is corrupt behind valid headers is found by Decode, which the caller
// runs to make the sub-sizes.
func Clean(data []byte, mime string, lim Limits) (Cleaned, error) {
	info, err := Probe(data, lim)
	if err != nil {
		return Cleaned{}, err
	}
	if info.Mime != mime {
		return Cleaned{}, newError(KindUnsupported, "the content is "+info.Mime+", not "+mime, nil)
	}
	md := readMetadata(mime, data)
	if md.orientation != 1 {
		img, err := DecodeBytes(data, lim)
		if err != nil {
			return Cleaned{}, err
		}
		var buf bytes.Buffer
		if err := Encode(&buf, img, mime, 0); err != nil {
			return Cleaned{}, err
		}
		md.meta.Orientation = "1"
		return Cleaned{Data: buf.Bytes(), Meta: md.meta, Width: img.Width(), Height: img.Height(), Reencoded: true}, nil
	}
	var out []byte
	switch mime {
	case JPEG:
		out, err = stripJPEG(data)
	case PNG:
		out, err = stripPNG(data)
	case GIF:
		out, err = stripGIF(data)
	case WebP:
		out, err = stripWebP(data)
	}
	if err != nil {
		return Cleaned{}, newError(KindCorrupt, "the image cannot be decoded", err)
	}
	return Cleaned{Data: out, Meta: md.meta, Width: info.Width, Height: info.Height}, nil
}

// stripJPEG drops metadata segments, copies the scans and the tables between them byte for byte,
// and ends at EOI (bytes appended after the image, a polyglot's payload, are dropped).
func stripJPEG(data []byte) ([]byte, error) {
	segs, sos, err := jpegSegments(data)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(data))
	out = append(out, 0xFF, 0xD8)
	for _, s := range segs {
		if keepJPEGSegment(s) {
			out = append(out, data[s.start:s.end]...)
		}
	}
	// From the first SOS: each segment (SOS or a table between progressive scans) is followed,
	// for SOS, by entropy-coded data in which 0xFF is always followed by 0x00 or a restart
	// marker; any other marker ends it.
	i := sos
	for {
		if i+2 > len(data) || data[i] != 0xFF {
			return nil, errTruncated
		}
		marker := data[i+1]
		if marker == 0xD9 { // EOI
			return append(out, 0xFF, 0xD9), nil
		}
		if marker == 0xFF { // fill byte
			i++
			continue
		}
		if i+4 > len(data) {
			return nil, errTruncated
		}
		n := int(binary.BigEndian.Uint16(data[i+2:]))
		if n < 2 || i+2+n > len(data) {
			return nil, errTruncated
		}
		seg := jpegSegment{marker: marker, start: i, end: i + 2 + n, payload: data[i+4 : i+2+n]}
		if keepJPEGSegment(seg) {
			out = append(out, data[seg.start:seg.end]...)
		}
		i = seg.end
		if marker != 0xDA {
			continue
		}
		start := i
		for i+1 < len(data) && (data[i] != 0xFF || data[i+1] == 0x00 || data[i+1] >= 0xD0 && data[i+1] <= 0xD7) {
			i++
		}
		if i+1 >= len(data) {
			return nil, errTruncated
		}
		out = append(out, data[start:i]...)
	}
}

func keepJPEGSegment(s jpegSegment) bool {
	switch {
	case s.marker == 0xFE: // COM
		return false
	case s.marker == 0xE0: // APP0: JFIF, JFXX
		return bytes.HasPrefix(s.payload, []byte("JFIF\x00")) || bytes.HasPrefix(s.payload, []byte("JFXX\x00"))
	case s.marker == 0xE2: // APP2: ICC profile chunks (not MPF, whose offsets would be wrong)
		return bytes.HasPrefix(s.payload, []byte("ICC_PROFILE\x00"))
	case s.marker == 0xEE: // APP14: Adobe, says how to read the colour components
		return bytes.HasPrefix(s.payload, []byte("Adobe"))
	case s.marker >= 0xE1 && s.marker <= 0xEF: // other APPn: EXIF, XMP, IPTC, maker data
		return false
	}
	return true
}

// stripPNG drops textual, EXIF and time chunks.
func stripPNG(data []byte) ([]byte, error) {
	chunks, err := pngChunks(data)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(data))
	out = append(out, pngSignature...)
	for _, c := range chunks {
		switch c.typ {
		case "tEXt", "zTXt", "iTXt", "eXIf", "tIME":
			continue
		}
		out = append(out, data[c.start:c.end]...)
	}
	return out, nil
}

// stripGIF drops comment extensions and application extensions other than the loop count
// (NETSCAPE2.0, ANIMEXTS1.0): XMP lives in one.
func stripGIF(data []byte) ([]byte, error) {
	n, err := gifHeaderLen(data)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(data))
	out = append(out, data[:n]...)
	trailer := false
	err = walkGIF(data, func(kind byte, block []byte) bool {
		switch {
		case kind == gifTrailer:
			trailer = true
		case kind == gifExtension && block[1] == 0xFE: // comment
			return true
		case kind == gifExtension && block[1] == 0xFF: // application
			if len(block) < 14 || (string(block[3:14]) != "NETSCAPE2.0" && string(block[3:14]) != "ANIMEXTS1.0") {
				return true
			}
		}
		out = append(out, block...)
		return true
	})
	if err != nil {
		return nil, err
	}
	if !trailer {
		out = append(out, gifTrailer)
	}
	return out, nil
}

// stripWebP drops the EXIF and XMP chunks, clears their VP8X flags and fixes the RIFF size.
func stripWebP(data []byte) ([]byte, error) {
	chunks, err := webpChunks(data)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 12, len(data))
	copy(out, data[:12])
	for _, c := range chunks {
		switch c.fourCC {
		case "EXIF", "XMP ":
			continue
		case "VP8X":
			at := len(out)
			out = append(out, data[c.start:c.end]...)
			if len(c.data) >= 1 {
				out[at+8] &^= 0x08 | 0x04 // EXIF and XMP flags
			}
			continue
		}
		out = append(out, data[c.start:c.end]...)
	}
	binary.LittleEndian.PutUint32(out[4:], uint32(len(out)-8))
	return out, nil
}
