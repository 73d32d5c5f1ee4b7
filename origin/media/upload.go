package media

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/unicode/norm"

	"vitrine/schema"
)

// Upload refusals, with WordPress's codes and messages (class-wp-rest-attachments-controller).
var (
	errNoData         = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_upload_no_data", Message: "No data supplied."}
	errNoContentType  = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_upload_no_content_type", Message: "No Content-Type supplied."}
	errNoDisposition  = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_upload_no_content_disposition", Message: "No Content-Disposition supplied."}
	errBadDisposition = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_upload_invalid_disposition",
		Message: "Invalid Content-Disposition supplied. Content-Disposition needs to be formatted as `attachment; filename=\"image.png\"` or similar."}
	errHashMismatch = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_upload_hash_mismatch", Status: 412, Message: "Content hash did not match expected."}
)

// Bounds of a multipart form's fields besides the file.
const (
	maxFormFields    = 100
	maxFormFieldSize = 64 << 10
)

// upload is a decoded upload request.
type upload struct {
	data []byte
	// filename is the file's name as the client gave it (Content-Disposition, or the form
	// part's), never trusted for the type.
	filename string
	// multipart: the file came as the form field "file" (its refusals are WordPress's
	// rest_upload_unknown_error, a raw body's rest_upload_sideload_error).
	multipart bool
	// fields are the form's other fields (multipart only), by name.
	fields map[string]string
}

// tooBig is WordPress's rest_upload_file_too_big for a limit of max bytes.
func tooBig(max int64) *schema.Error {
	return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_upload_file_too_big",
		Message: "This file is too big. Files must be less than " + thousands(max/1024) + " KB in size."}
}

// thousands formats n with comma separators (PHP's number_format).
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// isMultipart reports whether a Content-Type is multipart/form-data, and its boundary.
func isMultipart(contentType string) (string, bool) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" {
		return "", false
	}
	return params["boundary"], true
}

// readForm reads a multipart/form-data body: the first part named "file" that carries a file
// name is the upload (at most max bytes: a larger one is rest_upload_file_too_big), the other
// parts are fields (at most maxFormFields of maxFormFieldSize bytes). A form without a file, or
// that does not parse, is rest_upload_no_data, as WordPress finds no file in it.
func readForm(body []byte, boundary string, max int64) (*upload, error) {
	if boundary == "" {
		return nil, errNoData
	}
	up := &upload{multipart: true, fields: map[string]string{}}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	found := false
	for n := 0; ; n++ {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil || n >= maxFormFields+1 {
			return nil, errNoData
		}
		name, filename := partNames(part.Header.Get("Content-Disposition"))
		switch {
		case name == "file" && filename != "" && !found:
			data, err := io.ReadAll(io.LimitReader(part, max+1))
			if err != nil {
				return nil, errNoData
			}
			if int64(len(data)) > max {
				return nil, tooBig(max)
			}
			up.data, up.filename, found = data, filename, true
		case name != "" && filename == "":
			v, err := io.ReadAll(io.LimitReader(part, maxFormFieldSize+1))
			if err != nil || len(v) > maxFormFieldSize {
				return nil, schema.InvalidParam(name, name+" is too long.")
			}
			up.fields[name] = string(v)
		}
		part.Close()
	}
	if !found || len(up.data) == 0 {
		return nil, errNoData
	}
	return up, nil
}

// partNames returns the field name and file name of a form part's Content-Disposition.
func partNames(disposition string) (name, filename string) {
	_, params, err := mime.ParseMediaType(disposition)
	if err == nil {
		return params["name"], baseName(params["filename"])
	}
	// Lenient, as PHP: a file name with characters the grammar refuses.
	for _, attr := range strings.Split(disposition, ";") {
		k, v, ok := strings.Cut(attr, "=")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "name":
			name = unquote(strings.TrimSpace(v))
		case "filename":
			filename = baseName(unquote(strings.TrimSpace(v)))
		}
	}
	return name, filename
}

// readRaw checks a raw upload, in WordPress's order: a body, a Content-Type, a
// Content-Disposition naming a file, then Content-MD5 and the size.
func readRaw(body []byte, contentType string, dispositions []string, contentMD5 string, max int64) (*upload, error) {
	if len(body) == 0 {
		return nil, errNoData
	}
	if strings.TrimSpace(contentType) == "" {
		return nil, errNoContentType
	}
	if len(dispositions) == 0 {
		return nil, errNoDisposition
	}
	name := FilenameFromDisposition(dispositions)
	if name == "" {
		return nil, errBadDisposition
	}
	if err := checkMD5(body, contentMD5); err != nil {
		return nil, err
	}
	if int64(len(body)) > max {
		return nil, tooBig(max)
	}
	return &upload{data: body, filename: name}, nil
}

// checkMD5 compares a Content-MD5 header with the body's digest: hex as WordPress expects
// (either case), or base64 as RFC 1864 has it. An empty header checks nothing.
func checkMD5(body []byte, header string) error {
	want := strings.TrimSpace(header)
	if want == "" {
		return nil
	}
	sum := md5.Sum(body)
	if strings.EqualFold(want, hex.EncodeToString(sum[:])) || want == base64.StdEncoding.EncodeToString(sum[:]) {
		return nil
	}
	return errHashMismatch
}

// FilenameFromDisposition returns the file name of Content-Disposition header values, "" when
// none names one. Like WordPress's get_filename_from_disposition it is lenient (the disposition
// type is not checked, a value may be quoted or not, the last header naming a file wins), and
// it also reads RFC 6266's filename*=UTF-8”… (preferred over filename in the same header).
// Directories in the name are dropped.
func FilenameFromDisposition(values []string) string {
	var out string
	for _, v := range values {
		v = strings.TrimSpace(v)
		_, attrs, ok := strings.Cut(v, ";")
		if !ok {
			continue
		}
		var plain, ext string
		for _, attr := range strings.Split(attrs, ";") {
			k, val, ok := strings.Cut(attr, "=")
			if !ok {
				continue
			}
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "filename":
				plain = unquote(strings.TrimSpace(val))
			case "filename*":
				ext = decodeExtValue(strings.TrimSpace(val))
			}
		}
		name := plain
		if ext != "" {
			name = ext
		}
		if name = baseName(name); name != "" {
			out = name
		}
	}
	return out
}

// unquote strips one pair of double quotes (WordPress does no more).
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// decodeExtValue decodes an RFC 8187 ext-value (charset'language'percent-encoded), in UTF-8 or
// ISO-8859-1; "" when it does not decode.
func decodeExtValue(v string) string {
	parts := strings.SplitN(unquote(v), "'", 3)
	if len(parts) != 3 {
		return ""
	}
	raw, err := url.PathUnescape(parts[2])
	if err != nil {
		return ""
	}
	switch strings.ToLower(parts[0]) {
	case "utf-8":
		if !utf8.ValidString(raw) {
			return ""
		}
		return raw
	case "iso-8859-1":
		s, err := charmap.ISO8859_1.NewDecoder().String(raw)
		if err != nil {
			return ""
		}
		return s
	}
	return ""
}

// baseName drops the directories of a client's file name (either separator) and trims it.
func baseName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	return strings.TrimSpace(name)
}

// maxStemLen bounds a file name's stem, so that a sub-size's name stays well within a blob
// name segment (blob.MaxSegmentLen).
const maxStemLen = 80

// Stem returns the part of a client's file name that names the stored files: the base name
// without its extension, accents dropped (café → cafe), every byte other than ASCII letters,
// digits, '.', '_' and '-' replaced by '-', runs collapsed, at most 80 bytes, never empty
// ("unnamed-file", WordPress's name for a file whose name sanitises to nothing). The stored
// files' extensions come from the sniffed type, never from the client.
func Stem(filename string) string {
	name := baseName(filename)
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	var b strings.Builder
	dash := false
	for _, r := range norm.NFD.String(name) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue // the accent of a decomposed letter
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'):
			b.WriteRune(r)
			dash = false
		case r == '.' || r == '-':
			if !dash {
				b.WriteRune(r)
			}
			dash = r == '-'
		default:
			if !dash {
				b.WriteByte('-')
			}
			dash = true
		}
		if b.Len() >= maxStemLen {
			break
		}
	}
	s := b.String()
	if len(s) > maxStemLen {
		s = s[:maxStemLen]
	}
	s = strings.Trim(s, ".-_")
	if s == "" {
		return "unnamed-file"
	}
	return s
}

// titleOf is WordPress's default title of an upload: the client's file name without its
// extension, as text (control characters dropped, trimmed, at most 200 bytes).
func titleOf(filename string) string {
	name := baseName(filename)
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	for len(name) > 200 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}
