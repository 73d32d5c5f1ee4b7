package imaging

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// ImageMeta is WordPress's image_meta (wp_read_image_metadata): what the EXIF and IPTC blocks of
// an upload said before they were dropped. Numbers are kept as the strings WordPress stores
// ("0" when absent, "2.8", "0.004"); created_timestamp is Unix seconds in UTC. The texts are raw:
// WordPress passes them through wp_kses_post_deep, which the caller does (origin/kses).
type ImageMeta struct {
	Aperture         string
	Credit           string
	Camera           string
	Caption          string
	CreatedTimestamp string
	Copyright        string
	FocalLength      string
	ISO              string
	ShutterSpeed     string
	Title            string
	Orientation      string
	Keywords         []string
}

// KeywordSeparator joins Keywords in Map (IPTC keywords hold no line breaks).
const KeywordSeparator = "\n"

// Map returns the meta with WordPress's keys, every key present as WordPress has them (numbers
// "0" when absent), keywords joined by KeywordSeparator ("" when none): the shape of
// schema.Attachment.ImageMeta.
func (m ImageMeta) Map() map[string]string {
	zero := func(s string) string {
		if s == "" {
			return "0"
		}
		return s
	}
	return map[string]string{
		"aperture":          zero(m.Aperture),
		"credit":            m.Credit,
		"camera":            m.Camera,
		"caption":           m.Caption,
		"created_timestamp": zero(m.CreatedTimestamp),
		"copyright":         m.Copyright,
		"focal_length":      zero(m.FocalLength),
		"iso":               zero(m.ISO),
		"shutter_speed":     zero(m.ShutterSpeed),
		"title":             m.Title,
		"orientation":       zero(m.Orientation),
		"keywords":          strings.Join(m.Keywords, KeywordSeparator),
	}
}

// metadata is what readMetadata finds.
type metadata struct {
	meta        ImageMeta
	orientation int    // 1..8; 1 when absent or out of range
	icc         []byte // the ICC colour profile, nil when none (or larger than maxICC)
}

// maxMetaBlock bounds the EXIF or IPTC block read from a PNG or WebP chunk (a JPEG segment is at
// most 64 KiB anyway).
const maxMetaBlock = 1 << 20

// readMetadata reads the EXIF (JPEG APP1, PNG eXIf, WebP EXIF) and IPTC (JPEG APP13) blocks of
// an image. It never fails: unreadable metadata is no metadata.
func readMetadata(mime string, data []byte) (md metadata) {
	md.orientation = 1
	defer func() {
		if recover() != nil { // a bug here must not refuse the image
			md = metadata{orientation: 1}
		}
	}()
	var tiff, iptc []byte
	switch mime {
	case JPEG:
		segs, _, err := jpegSegments(data)
		if err != nil {
			return md
		}
		for _, s := range segs {
			switch {
			case s.marker == 0xE1 && tiff == nil && bytes.HasPrefix(s.payload, []byte("Exif\x00\x00")):
				tiff = s.payload[6:]
			case s.marker == 0xED && iptc == nil && bytes.HasPrefix(s.payload, []byte("Photoshop 3.0\x00")):
				iptc = s.payload[14:]
			}
		}
		md.icc = jpegICC(segs)
	case PNG:
		chunks, err := pngChunks(data)
		if err != nil {
			return md
		}
		for _, c := range chunks {
			switch {
			case c.typ == "eXIf" && tiff == nil && len(c.data) <= maxMetaBlock:
				tiff = c.data
			case c.typ == "iCCP" && md.icc == nil:
				md.icc = pngICC(c.data)
			}
		}
	case WebP:
		chunks, err := webpChunks(data)
		if err != nil {
			return md
		}
		for _, c := range chunks {
			switch {
			case c.fourCC == "EXIF" && tiff == nil && len(c.data) <= maxMetaBlock:
				tiff = bytes.TrimPrefix(c.data, []byte("Exif\x00\x00"))
			case c.fourCC == "ICCP" && md.icc == nil && len(c.data) <= maxICC:
				md.icc = c.data
			}
		}
	}
	var ip iptcRecords
	if iptc != nil {
		ip = parsePhotoshopIPTC(iptc)
	}
	var ex exifTags
	if tiff != nil {
		ex = parseEXIF(tiff)
	}
	md.meta = buildMeta(ip, ex)
	if ex.orientation >= 1 && ex.orientation <= 8 {
		md.orientation = ex.orientation
	}
	return md
}

// buildMeta follows wp_read_image_metadata: IPTC first, EXIF filling what IPTC left empty.
func buildMeta(ip iptcRecords, ex exifTags) ImageMeta {
	var m ImageMeta
	first := func(ds byte) string {
		if v := ip[ds]; len(v) > 0 {
			return strings.TrimSpace(text(v[0]))
		}
		return ""
	}
	if t := first(105); t != "" { // headline
		m.Title = t
	} else if t := first(5); t != "" { // object name
		m.Title = t
	}
	if c := first(120); c != "" { // caption/abstract
		if m.Title == "" && len(c) < 80 {
			m.Title = c
		}
		m.Caption = c
	}
	if c := first(110); c != "" { // credit
		m.Credit = c
	} else if c := first(80); c != "" { // by-line
		m.Credit = c
	}
	if d, t := first(55), first(60); d != "" && t != "" {
		if ts, ok := iptcTime(d, t); ok {
			m.CreatedTimestamp = strconv.FormatInt(ts, 10)
		}
	}
	m.Copyright = first(116)
	for _, k := range ip[25] {
		m.Keywords = append(m.Keywords, text(k))
	}

	if ex.description != "" {
		if m.Title == "" && len(ex.description) < 80 {
			m.Title = strings.TrimSpace(ex.description)
		}
		if m.Caption == "" && strings.TrimSpace(ex.userComment) != "" {
			m.Caption = strings.TrimSpace(ex.userComment)
		}
		if m.Caption == "" {
			m.Caption = strings.TrimSpace(ex.description)
		}
	} else if m.Caption == "" && ex.comments != "" {
		m.Caption = strings.TrimSpace(ex.comments)
	}
	if m.Credit == "" {
		if ex.artist != "" {
			m.Credit = strings.TrimSpace(ex.artist)
		} else if ex.author != "" {
			m.Credit = strings.TrimSpace(ex.author)
		}
	}
	if m.Copyright == "" && ex.copyright != "" {
		m.Copyright = strings.TrimSpace(ex.copyright)
	}
	if ex.fNumber > 0 {
		m.Aperture = phpFloat(math.Round(ex.fNumber*100) / 100)
	}
	if ex.model != "" {
		m.Camera = strings.TrimSpace(ex.model)
	}
	if m.CreatedTimestamp == "" && ex.dateDigitized != "" {
		if t, err := time.Parse("2006:01:02 15:04:05", strings.TrimSpace(ex.dateDigitized)); err == nil {
			m.CreatedTimestamp = strconv.FormatInt(t.Unix(), 10)
		}
	}
	if ex.focalLength > 0 {
		m.FocalLength = phpFloat(ex.focalLength)
	}
	if ex.iso > 0 {
		m.ISO = strconv.Itoa(ex.iso)
	}
	if ex.exposure > 0 {
		m.ShutterSpeed = phpFloat(ex.exposure)
	}
	if ex.orientation > 0 {
		m.Orientation = strconv.Itoa(ex.orientation)
	}
	return m
}

// phpFloat formats a number as PHP's string conversion does (precision 14): 4 → "4",
// 1/250 → "0.004".
func phpFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 14, 64)
}

// text turns metadata bytes into UTF-8: valid UTF-8 as is, anything else read as Latin-1 (as
// WordPress's utf8_encode does); NULs dropped.
func text(b []byte) string {
	b = bytes.TrimRight(b, "\x00")
	if utf8.Valid(b) {
		return strings.ReplaceAll(string(b), "\x00", "")
	}
	r := make([]rune, 0, len(b))
	for _, c := range b {
		if c != 0 {
			r = append(r, rune(c))
		}
	}
	return string(r)
}

// iptcTime reads IPTC's date (CCYYMMDD) and time (HHMMSS±HHMM) as a Unix time.
func iptcTime(d, t string) (int64, bool) {
	day, err := time.Parse("20060102", d)
	if err != nil {
		return 0, false
	}
	var clock time.Time
	for _, layout := range []string{"150405-0700", "150405"} {
		if clock, err = time.Parse(layout, t); err == nil {
			break
		}
	}
	if err != nil {
		return 0, false
	}
	_, off := clock.Zone()
	ts := time.Date(day.Year(), day.Month(), day.Day(), clock.Hour(), clock.Minute(), clock.Second(), 0, time.UTC)
	return ts.Unix() - int64(off), true
}

// iptcRecords are the datasets of IPTC record 2 (application), by dataset number, in order.
type iptcRecords map[byte][][]byte

// maxIPTCValues bounds how many values are kept (keywords are repeatable).
const maxIPTCValues = 256

// parsePhotoshopIPTC reads the IPTC-NAA resource (0x0404) of a Photoshop image resource block
// (a JPEG APP13 after its "Photoshop 3.0" signature).
func parsePhotoshopIPTC(b []byte) iptcRecords {
	for len(b) >= 12 && string(b[:4]) == "8BIM" {
		id := binary.BigEndian.Uint16(b[4:])
		n := int(b[6]) // Pascal name, padded to even length with its length byte
		i := 6 + 1 + n
		if (1+n)%2 == 1 {
			i++
		}
		if i+4 > len(b) {
			return nil
		}
		size := int(binary.BigEndian.Uint32(b[i:]))
		i += 4
		if size < 0 || size > len(b)-i {
			return nil
		}
		if id == 0x0404 {
			return parseIPTC(b[i : i+size])
		}
		i += size + size%2
		if i > len(b) {
			return nil
		}
		b = b[i:]
	}
	return nil
}

// parseIPTC reads IIM datasets of record 2.
func parseIPTC(b []byte) iptcRecords {
	recs := iptcRecords{}
	count := 0
	for len(b) >= 5 && b[0] == 0x1C && count < maxIPTCValues {
		rec, ds := b[1], b[2]
		n := int(binary.BigEndian.Uint16(b[3:]))
		i := 5
		if n&0x8000 != 0 { // extended dataset: the next n&0x7fff bytes hold the length
			k := n & 0x7FFF
			if k > 4 || i+k > len(b) {
				return recs
			}
			n = 0
			for _, c := range b[i : i+k] {
				n = n<<8 | int(c)
			}
			i += k
		}
		if n < 0 || n > len(b)-i {
			return recs
		}
		if rec == 2 {
			recs[ds] = append(recs[ds], b[i:i+n])
			count++
		}
		b = b[i+n:]
	}
	return recs
}

// exifTags are the EXIF values WordPress reads.
type exifTags struct {
	orientation                    int
	description, model, artist     string
	copyright, dateDigitized       string
	userComment, author, comments  string
	fNumber, exposure, focalLength float64
	iso                            int
}

// TIFF tags read, in IFD0 and the Exif sub-IFD.
const (
	tagImageDescription  = 0x010E
	tagModel             = 0x0110
	tagOrientation       = 0x0112
	tagArtist            = 0x013B
	tagCopyright         = 0x8298
	tagExposureTime      = 0x829A
	tagFNumber           = 0x829D
	tagExifIFD           = 0x8769
	tagISOSpeedRatings   = 0x8827
	tagDateTimeDigitized = 0x9004
	tagFocalLength       = 0x920A
	tagUserComment       = 0x9286
	tagXPComment         = 0x9C9C
	tagXPAuthor          = 0x9C9D
)

// maxIFDEntries bounds the entries read from one IFD.
const maxIFDEntries = 1024

// parseEXIF reads IFD0 and the Exif sub-IFD of a TIFF-structured EXIF block. Every offset and
// length is checked against the block before use, so nothing is allocated beyond its size; an
// unreadable tag is skipped.
func parseEXIF(b []byte) (t exifTags) {
	if len(b) < 8 {
		return t
	}
	var bo binary.ByteOrder
	switch string(b[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return t
	}
	type entry struct {
		typ   uint16
		count uint32
		value []byte // the value's bytes, within b
	}
	sizes := map[uint16]uint64{1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 9: 4, 10: 8, 13: 4}
	readIFD := func(off uint32) map[uint16]entry {
		if uint64(off)+2 > uint64(len(b)) {
			return nil
		}
		n := int(bo.Uint16(b[off:]))
		if n > maxIFDEntries || uint64(off)+2+uint64(n)*12 > uint64(len(b)) {
			return nil
		}
		out := map[uint16]entry{}
		for i := 0; i < n; i++ {
			e := b[int(off)+2+12*i:]
			tag, typ, count := bo.Uint16(e), bo.Uint16(e[2:]), bo.Uint32(e[4:])
			size, ok := sizes[typ]
			if !ok {
				continue
			}
			total := size * uint64(count)
			var v []byte
			if total <= 4 {
				v = e[8 : 8+total]
			} else {
				at := uint64(bo.Uint32(e[8:]))
				if at+total > uint64(len(b)) {
					continue
				}
				v = b[at : at+total]
			}
			if _, dup := out[tag]; !dup {
				out[tag] = entry{typ: typ, count: count, value: v}
			}
		}
		return out
	}
	ascii := func(ifd map[uint16]entry, tag uint16) string {
		e, ok := ifd[tag]
		if !ok || (e.typ != 2 && e.typ != 7 && e.typ != 1) {
			return ""
		}
		return text(e.value)
	}
	rational := func(ifd map[uint16]entry, tag uint16) float64 {
		e, ok := ifd[tag]
		switch {
		case !ok || e.count < 1:
			return 0
		case e.typ == 5:
			num, den := bo.Uint32(e.value), bo.Uint32(e.value[4:])
			if den == 0 {
				return 0
			}
			return float64(num) / float64(den)
		case e.typ == 10:
			num, den := int32(bo.Uint32(e.value)), int32(bo.Uint32(e.value[4:]))
			if den == 0 {
				return 0
			}
			return float64(num) / float64(den)
		}
		return integer(bo, e.typ, e.value)
	}
	ucs2 := func(ifd map[uint16]entry, tag uint16) string { // Windows XP tags: UTF-16LE in BYTEs
		e, ok := ifd[tag]
		if !ok || e.typ != 1 || len(e.value) < 2 {
			return ""
		}
		u := make([]uint16, len(e.value)/2)
		for i := range u {
			u[i] = binary.LittleEndian.Uint16(e.value[2*i:])
		}
		return strings.TrimRight(string(utf16.Decode(u)), "\x00")
	}

	ifd0 := readIFD(bo.Uint32(b[4:]))
	e, ok := ifd0[tagOrientation]
	if ok && (e.typ == 3 || e.typ == 4) && e.count >= 1 {
		t.orientation = int(integer(bo, e.typ, e.value))
	}
	t.description = ascii(ifd0, tagImageDescription)
	t.model = ascii(ifd0, tagModel)
	t.artist = ascii(ifd0, tagArtist)
	t.copyright = ascii(ifd0, tagCopyright)
	t.comments = ucs2(ifd0, tagXPComment)
	t.author = ucs2(ifd0, tagXPAuthor)
	if p, ok := ifd0[tagExifIFD]; ok && (p.typ == 4 || p.typ == 13) && len(p.value) == 4 {
		sub := readIFD(bo.Uint32(p.value))
		t.fNumber = rational(sub, tagFNumber)
		t.exposure = rational(sub, tagExposureTime)
		t.focalLength = rational(sub, tagFocalLength)
		if e, ok := sub[tagISOSpeedRatings]; ok && (e.typ == 3 || e.typ == 4) && e.count >= 1 {
			t.iso = int(integer(bo, e.typ, e.value))
		}
		t.dateDigitized = ascii(sub, tagDateTimeDigitized)
		if e, ok := sub[tagUserComment]; ok && e.typ == 7 && len(e.value) >= 8 {
			t.userComment = userComment(bo, e.value)
		}
	}
	return t
}

// integer reads the first value of a BYTE, SHORT or LONG entry.
func integer(bo binary.ByteOrder, typ uint16, v []byte) float64 {
	switch {
	case typ == 1 && len(v) >= 1:
		return float64(v[0])
	case typ == 3 && len(v) >= 2:
		return float64(bo.Uint16(v))
	case typ == 4 && len(v) >= 4:
		return float64(bo.Uint32(v))
	}
	return 0
}

// userComment decodes an EXIF UserComment: an 8-byte character code, then the text.
func userComment(bo binary.ByteOrder, v []byte) string {
	code, body := string(v[:8]), v[8:]
	if strings.HasPrefix(code, "UNICODE") {
		u := make([]uint16, len(body)/2)
		for i := range u {
			u[i] = bo.Uint16(body[2*i:])
		}
		return strings.TrimRight(string(utf16.Decode(u)), "\x00 ")
	}
	return strings.TrimRight(text(body), " ")
}
