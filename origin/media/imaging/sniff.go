package imaging

import (
	"strings"

	"github.com/gabriel-vasile/mimetype"
)

// SniffLen is how many leading bytes of a file Sniff looks at; give it at least that many when
// the file is that long.
const SniffLen = 4096

// Image MIME types: the ones Decode reads and Encode writes.
const (
	JPEG = "image/jpeg"
	PNG  = "image/png"
	GIF  = "image/gif"
	WebP = "image/webp"
)

// accepted is the allowlist of sniffed types, with the extension WordPress gives each. It is a
// conservative subset of what WordPress allows by default (get_allowed_mime_types): the four web
// image formats this package decodes, and common documents and media that browsers do not run.
// Refused on purpose: SVG (scriptable; WordPress refuses it too), HTML, XML, JavaScript,
// executables, the legacy binary Office formats (macros), archives other than zip (and zip-based
// executables: jar, apk), and images no decoder here reads (AVIF, HEIC, TIFF, BMP, ICO).
var accepted = map[string]string{
	JPEG: "jpg",
	PNG:  "png",
	GIF:  "gif",
	WebP: "webp",

	"application/pdf": "pdf",
	"text/plain":      "txt",
	"text/csv":        "csv",

	"audio/mpeg":  "mp3",
	"audio/wav":   "wav",
	"audio/ogg":   "ogg",
	"audio/flac":  "flac",
	"audio/x-m4a": "m4a",
	"audio/mp4":   "m4a",
	"video/mp4":   "mp4",
	"video/webm":  "webm",
	"video/ogg":   "ogv",
	// QuickTime (.mov), which WordPress also allows.
	"video/quicktime": "mov",

	"application/zip": "zip",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   "docx",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         "xlsx",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
	"application/vnd.oasis.opendocument.text":                                   "odt",
	"application/vnd.oasis.opendocument.spreadsheet":                            "ods",
}

// Sniff returns the MIME type of a file from its first bytes (give it SniffLen bytes, or the
// whole file when shorter), whatever the file's name says. Types outside the allowlist (see
// Accepted) give a KindUnsupported error naming the sniffed type; an empty head is
// KindUnsupported too. Parameters such as text/plain's charset are dropped.
func Sniff(head []byte) (string, error) {
	if len(head) == 0 {
		return "", newError(KindUnsupported, "the file is empty", nil)
	}
	if len(head) > SniffLen {
		head = head[:SniffLen]
	}
	m := mimetype.Detect(head).String()
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = strings.TrimSpace(m[:i])
	}
	if m == "image/apng" { // an animated PNG is a PNG (its first frame decodes as one)
		m = PNG
	}
	if _, ok := accepted[m]; !ok {
		return "", newError(KindUnsupported, "sorry, you are not allowed to upload this file type ("+m+")", nil)
	}
	return m, nil
}

// Accepted reports whether a MIME type is on Sniff's allowlist.
func Accepted(mime string) bool {
	_, ok := accepted[mime]
	return ok
}

// Extension returns the file extension (without the dot) for an accepted MIME type, "" for
// others.
func Extension(mime string) string { return accepted[mime] }

// IsImage reports whether mime is one of the image types Decode reads (and the edit route may
// edit).
func IsImage(mime string) bool {
	switch mime {
	case JPEG, PNG, GIF, WebP:
		return true
	}
	return false
}
