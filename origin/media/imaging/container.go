package imaging

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// Walkers over the four containers' blocks, shared by metadata reading and Clean. Each checks
// every length against the data and returns errTruncated rather than reading past the end.

var errTruncated = errors.New("truncated or malformed container")

// jpegSegment is one marker segment before the first scan.
type jpegSegment struct {
	marker  byte
	start   int    // offset of the 0xFF of the marker
	end     int    // offset just past the segment
	payload []byte // the bytes after the length field
}

// jpegSegments returns the segments from SOI up to (not including) the first SOS, and the offset
// of that SOS marker.
func jpegSegments(data []byte) (segs []jpegSegment, sos int, err error) {
	if len(data) < 4 || data[0] != 0xFF || data[1] != 0xD8 {
		return nil, 0, errTruncated
	}
	i := 2
	for {
		if i >= len(data) || data[i] != 0xFF {
			return nil, 0, errTruncated
		}
		start := i
		for i < len(data) && data[i] == 0xFF { // fill bytes
			i++
		}
		if i >= len(data) {
			return nil, 0, errTruncated
		}
		marker := data[i]
		i++
		switch {
		case marker == 0xDA: // SOS: the entropy-coded data follows
			return segs, start, nil
		case marker == 0xD9: // EOI before any scan
			return nil, 0, errTruncated
		case marker == 0x01 || marker >= 0xD0 && marker <= 0xD7: // no length
			segs = append(segs, jpegSegment{marker: marker, start: start, end: i})
			continue
		}
		if i+2 > len(data) {
			return nil, 0, errTruncated
		}
		n := int(binary.BigEndian.Uint16(data[i:]))
		if n < 2 || i+n > len(data) {
			return nil, 0, errTruncated
		}
		segs = append(segs, jpegSegment{marker: marker, start: start, end: i + n, payload: data[i+2 : i+n]})
		i += n
	}
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// pngChunk is one PNG chunk.
type pngChunk struct {
	typ        string
	start, end int // the whole chunk: length, type, data, CRC
	data       []byte
}

// pngChunks returns the chunks up to and including IEND.
func pngChunks(data []byte) ([]pngChunk, error) {
	if !bytes.HasPrefix(data, pngSignature) {
		return nil, errTruncated
	}
	var chunks []pngChunk
	i := len(pngSignature)
	for {
		if i+8 > len(data) {
			return nil, errTruncated
		}
		n := binary.BigEndian.Uint32(data[i:])
		if n > uint32(len(data)) || i+12+int(n) > len(data) {
			return nil, errTruncated
		}
		c := pngChunk{typ: string(data[i+4 : i+8]), start: i, end: i + 12 + int(n), data: data[i+8 : i+8+int(n)]}
		chunks = append(chunks, c)
		i = c.end
		if c.typ == "IEND" {
			return chunks, nil
		}
	}
}

// riffChunk is one chunk of a WebP file's RIFF container.
type riffChunk struct {
	fourCC     string
	start, end int // the whole chunk with its padding byte
	data       []byte
}

// webpChunks returns the chunks of a WebP file (the RIFF size is trusted only up to the data).
func webpChunks(data []byte) ([]riffChunk, error) {
	if len(data) < 12 || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WEBP" {
		return nil, errTruncated
	}
	end := int(binary.LittleEndian.Uint32(data[4:])) + 8
	if end > len(data) || end < 12 {
		return nil, errTruncated
	}
	var chunks []riffChunk
	for i := 12; i < end; {
		if i+8 > end {
			return nil, errTruncated
		}
		n := int(binary.LittleEndian.Uint32(data[i+4:]))
		if n < 0 || n > end || i+8+n > end {
			return nil, errTruncated
		}
		c := riffChunk{fourCC: string(data[i : i+4]), start: i, data: data[i+8 : i+8+n]}
		c.end = i + 8 + n + n&1
		if c.end > end {
			c.end = end
		}
		chunks = append(chunks, c)
		i = c.end
	}
	return chunks, nil
}

// GIF block kinds.
const (
	gifExtension = 0x21
	gifImage     = 0x2C
	gifTrailer   = 0x3B
)

// gifHeaderLen returns the length of a GIF's header, logical screen descriptor and global colour
// table.
func gifHeaderLen(data []byte) (int, error) {
	if len(data) < 13 || (string(data[:6]) != "GIF87a" && string(data[:6]) != "GIF89a") {
		return 0, errTruncated
	}
	n := 13
	if flags := data[10]; flags&0x80 != 0 {
		n += 3 << (uint(flags&7) + 1)
	}
	if n > len(data) {
		return 0, errTruncated
	}
	return n, nil
}

// walkGIF calls fn with each block after the header (extension, image, trailer) and its bytes
// until fn returns false or the trailer is reached.
func walkGIF(data []byte, fn func(kind byte, block []byte) bool) error {
	i, err := gifHeaderLen(data)
	if err != nil {
		return err
	}
	subBlocks := func(i int) (int, error) {
		for {
			if i >= len(data) {
				return 0, errTruncated
			}
			n := int(data[i])
			i += 1 + n
			if n == 0 {
				return i, nil
			}
		}
	}
	for i < len(data) {
		start := i
		switch data[i] {
		case gifTrailer:
			fn(gifTrailer, data[i:i+1])
			return nil
		case gifExtension:
			if i+2 > len(data) {
				return errTruncated
			}
			end, err := subBlocks(i + 2)
			if err != nil {
				return err
			}
			i = end
			if !fn(gifExtension, data[start:end]) {
				return nil
			}
		case gifImage:
			if i+10 > len(data) {
				return errTruncated
			}
			j := i + 10
			if flags := data[i+9]; flags&0x80 != 0 {
				j += 3 << (uint(flags&7) + 1)
			}
			j++ // LZW minimum code size
			end, err := subBlocks(j)
			if err != nil {
				return err
			}
			i = end
			if !fn(gifImage, data[start:end]) {
				return nil
			}
		default:
			return errTruncated
		}
	}
	return errTruncated
}
