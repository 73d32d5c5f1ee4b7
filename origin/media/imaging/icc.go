package imaging

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"io"
	"sort"
)

// Colour profiles are the one piece of metadata kept: pixels mean nothing without them (a
// Display P3 photograph shown as sRGB loses its colours), and WordPress's Imagick editor keeps
// them when it strips the rest. Decode reads the source's ICC profile into Image.ICC and Encode
// writes it into JPEG, PNG and WebP outputs.

// maxICC bounds the profile kept (real profiles are a few KiB; 1 MiB allows any sane one).
const maxICC = 1 << 20

var iccSignature = []byte("ICC_PROFILE\x00")

// jpegICC reassembles the ICC profile of a JPEG's APP2 segments (sequence-numbered chunks).
func jpegICC(segs []jpegSegment) []byte {
	type part struct {
		seq  byte
		data []byte
	}
	var parts []part
	total := 0
	for _, s := range segs {
		if s.marker != 0xE2 || !bytes.HasPrefix(s.payload, iccSignature) || len(s.payload) < len(iccSignature)+2 {
			continue
		}
		p := part{seq: s.payload[len(iccSignature)], data: s.payload[len(iccSignature)+2:]}
		total += len(p.data)
		if total > maxICC {
			return nil
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return nil
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].seq < parts[j].seq })
	out := make([]byte, 0, total)
	for _, p := range parts {
		out = append(out, p.data...)
	}
	return out
}

// pngICC inflates a PNG's iCCP chunk (name, NUL, compression method 0, zlib data), at most
// maxICC bytes.
func pngICC(data []byte) []byte {
	i := bytes.IndexByte(data, 0)
	if i < 1 || i > 79 || i+2 > len(data) || data[i+1] != 0 {
		return nil
	}
	zr, err := zlib.NewReader(bytes.NewReader(data[i+2:]))
	if err != nil {
		return nil
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxICC+1))
	if err != nil || len(out) > maxICC {
		return nil
	}
	return out
}

// withICC returns an encoded image with the profile embedded (the encoded bytes unchanged when
// there is none or the type has no place for one).
func withICC(encoded []byte, mime string, icc []byte, w, h int) []byte {
	if len(icc) == 0 || len(icc) > maxICC {
		return encoded
	}
	switch mime {
	case JPEG:
		return jpegWithICC(encoded, icc)
	case PNG:
		return pngWithICC(encoded, icc)
	case WebP:
		return webpWithICC(encoded, icc, w, h)
	}
	return encoded
}

// jpegWithICC inserts the profile as APP2 chunks right after SOI (and JFIF APP0, if any).
func jpegWithICC(enc, icc []byte) []byte {
	at := 2
	if len(enc) > 6 && enc[2] == 0xFF && enc[3] == 0xE0 {
		at = 4 + int(binary.BigEndian.Uint16(enc[4:]))
	}
	const chunk = 65535 - 2 - 14 // segment length field, signature, sequence and count
	n := (len(icc) + chunk - 1) / chunk
	if n > 255 || at > len(enc) {
		return enc
	}
	out := make([]byte, 0, len(enc)+len(icc)+18*n)
	out = append(out, enc[:at]...)
	for i := 0; i < n; i++ {
		part := icc[i*chunk : min((i+1)*chunk, len(icc))]
		out = append(out, 0xFF, 0xE2)
		out = binary.BigEndian.AppendUint16(out, uint16(2+len(iccSignature)+2+len(part)))
		out = append(out, iccSignature...)
		out = append(out, byte(i+1), byte(n))
		out = append(out, part...)
	}
	return append(out, enc[at:]...)
}

// pngWithICC inserts an iCCP chunk after IHDR.
func pngWithICC(enc, icc []byte) []byte {
	const ihdrEnd = 8 + 25
	if len(enc) < ihdrEnd || !bytes.HasPrefix(enc, pngSignature) {
		return enc
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(icc)
	_ = zw.Close()
	body := append([]byte("iCCP"), "ICC profile\x00\x00"...)
	body = append(body, z.Bytes()...)
	c := binary.BigEndian.AppendUint32(nil, uint32(len(body)-4))
	c = append(c, body...)
	c = binary.BigEndian.AppendUint32(c, crc32.ChecksumIEEE(body))
	out := make([]byte, 0, len(enc)+len(c))
	out = append(out, enc[:ihdrEnd]...)
	out = append(out, c...)
	return append(out, enc[ihdrEnd:]...)
}

// webpWithICC puts the profile in an ICCP chunk: right after VP8X (setting its ICC flag) in an
// extended file, or in a new VP8X container around a simple (VP8 or VP8L) file.
func webpWithICC(enc, icc []byte, w, h int) []byte {
	chunks, err := webpChunks(enc)
	if err != nil || len(chunks) == 0 || w < 1 || h < 1 {
		return enc
	}
	riff := func(fourCC string, data []byte) []byte {
		out := append([]byte(fourCC), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
		out = append(out, data...)
		if len(data)%2 == 1 {
			out = append(out, 0)
		}
		return out
	}
	body := []byte("WEBP")
	if chunks[0].fourCC == "VP8X" && len(chunks[0].data) == 10 {
		vp8x := append([]byte{}, chunks[0].data...)
		vp8x[0] |= 0x20
		body = append(body, riff("VP8X", vp8x)...)
		body = append(body, riff("ICCP", icc)...)
		for _, c := range chunks[1:] {
			if c.fourCC != "ICCP" {
				body = append(body, enc[c.start:c.end]...)
			}
		}
	} else {
		vp8x := make([]byte, 10)
		vp8x[0] = 0x20
		for i, v := range []int{w - 1, h - 1} {
			vp8x[4+3*i], vp8x[5+3*i], vp8x[6+3*i] = byte(v), byte(v>>8), byte(v>>16)
		}
		body = append(body, riff("VP8X", vp8x)...)
		body = append(body, riff("ICCP", icc)...)
		for _, c := range chunks {
			body = append(body, enc[c.start:c.end]...)
		}
	}
	return append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
}
