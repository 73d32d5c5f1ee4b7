package schema

import (
	"bytes"
	"html"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Media rendering: the fields WordPress's attachments controller adds to a post's view
// (description, caption, alt_text, media_type, mime_type, media_details, post, source_url,
// missing_image_sizes, filename, filesize), in its order and contexts. RenderPost calls
// renderMedia for records of type attachment, after the fields every post type shares; an
// attachment has no content, excerpt or password, its guid is its file's URL and its link its
// attachment page (?attachment_id=N under plain permalinks).

// ImageSize is one of the image sub-sizes WordPress registers.
type ImageSize struct {
	Name          string
	Width, Height int // 0: unbounded in that dimension
	Crop          bool
}

// ImageSizes are WordPress's default image sub-sizes in the order it makes them (medium and large
// first: wp_create_image_subsizes' priority), which is the order of media_details.sizes.
var ImageSizes = []ImageSize{
	{Name: "medium", Width: 300, Height: 300},
	{Name: "large", Width: 1024, Height: 1024},
	{Name: "thumbnail", Width: 150, Height: 150, Crop: true},
	{Name: "medium_large", Width: 768},
	{Name: "1536x1536", Width: 1536, Height: 1536},
	{Name: "2048x2048", Width: 2048, Height: 2048},
}

// MaxSrcsetWidth is WordPress's max_srcset_image_width: wider files are left out of srcset.
const MaxSrcsetWidth = 2048

// phpRound rounds half away from zero, as PHP's round.
func phpRound(f float64) int { return int(math.Round(f)) }

// ResizeDimensions returns the dimensions of the sub-size s of a w×h image, and false when
// WordPress would not make it (image_resize_dimensions): a size that would be within a pixel of
// the original on both sides, since sizes never upscale.
func ResizeDimensions(w, h int, s ImageSize) (int, int, bool) {
	if w <= 0 || h <= 0 || s.Width <= 0 && s.Height <= 0 {
		return 0, 0, false
	}
	var nw, nh int
	if s.Crop {
		aspect := float64(w) / float64(h)
		nw, nh = min(s.Width, w), min(s.Height, h)
		if nw == 0 {
			nw = phpRound(float64(nh) * aspect)
		}
		if nh == 0 {
			nh = phpRound(float64(nw) / aspect)
		}
	} else {
		nw, nh = ConstrainDimensions(w, h, s.Width, s.Height)
	}
	if abs(nw-w) <= 1 && abs(nh-h) <= 1 {
		return 0, 0, false
	}
	return nw, nh, true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// matchesRatio reports whether two sizes show the same crop (wp_image_matches_ratio): the
// larger constrained to the smaller's width is within a pixel of it.
func matchesRatio(sw, sh, tw, th int) bool {
	var cw, ch, ew, eh int
	if sw > tw {
		cw, ch = ConstrainDimensions(sw, sh, tw, 0)
		ew, eh = tw, th
	} else {
		cw, ch = ConstrainDimensions(tw, th, sw, 0)
		ew, eh = sw, sh
	}
	return abs(cw-ew) <= 1 && abs(ch-eh) <= 1
}

// MediaFields are the fields an attachment's view adds to PostView; nil for other types. Pointer
// fields are present only in the contexts that show them.
type MediaFields struct {
	Description  *Rendered    `json:"description,omitempty"`
	Caption      Rendered     `json:"caption"`
	AltText      string       `json:"alt_text"`
	MediaType    string       `json:"media_type"`
	MimeType     string       `json:"mime_type"`
	MediaDetails MediaDetails `json:"media_details"`
	// Post is the parent record's id, null when there is none (view and edit).
	Post              *nullPostID `json:"post,omitempty"`
	SourceURL         string      `json:"source_url"`
	MissingImageSizes *[]string   `json:"missing_image_sizes,omitempty"`
	Filename          *string     `json:"filename,omitempty"`
	Filesize          *int64      `json:"filesize,omitempty"`
}

// nullPostID is a post id that encodes 0 as null.
type nullPostID PostID

func (n nullPostID) MarshalJSON() ([]byte, error) {
	if n == 0 {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, int64(n), 10), nil
}

// MediaDetails is an attachment's media_details: for an image its dimensions, file (the path
// under the uploads root), size, sub-sizes (each with its URL, and "full" last when there is any
// sub-size), image_meta and, when the file is a scaled copy, the original's file name; for other
// files their size and no sizes.
type MediaDetails struct {
	Image         bool
	Width, Height int
	File          string
	FileSize      int64
	Sizes         []MediaSize
	ImageMeta     map[string]string
	OriginalImage string
	// Empty marks an attachment without file facts: media_details is {}.
	Empty bool
}

// MediaSize is one entry of media_details.sizes. FileSize is 0 for "full", which WordPress lists
// without one.
type MediaSize struct {
	Name      string
	File      string // base name
	Width     int
	Height    int
	FileSize  int64
	MimeType  string
	SourceURL string
}

// imageMetaKeys are WordPress's image_meta keys in its order, with their defaults.
var imageMetaKeys = [][2]string{
	{"aperture", "0"}, {"credit", ""}, {"camera", ""}, {"caption", ""}, {"created_timestamp", "0"}, {"copyright", ""},
	{"focal_length", "0"}, {"iso", "0"}, {"shutter_speed", "0"}, {"title", ""}, {"orientation", "0"},
}

// MarshalJSON encodes media_details in WordPress's shape and order.
func (d MediaDetails) MarshalJSON() ([]byte, error) {
	if d.Empty {
		return []byte("{}"), nil
	}
	var o jsonObject
	if d.Image {
		o = append(o, jsonMember{"width", d.Width}, jsonMember{"height", d.Height}, jsonMember{"file", d.File})
	}
	o = append(o, jsonMember{"filesize", d.FileSize})
	sizes := jsonObject{}
	for _, s := range d.Sizes {
		e := jsonObject{{"file", s.File}, {"width", s.Width}, {"height", s.Height}}
		if s.FileSize > 0 {
			e = append(e, jsonMember{"filesize", s.FileSize})
		}
		e = append(e, jsonMember{"mime_type", s.MimeType}, jsonMember{"source_url", s.SourceURL})
		sizes = append(sizes, jsonMember{s.Name, e})
	}
	o = append(o, jsonMember{"sizes", sizes})
	if d.Image {
		meta := jsonObject{}
		for _, kv := range imageMetaKeys {
			v := kv[1]
			if got, ok := d.ImageMeta[kv[0]]; ok && got != "" {
				v = got
			}
			meta = append(meta, jsonMember{kv[0], v})
		}
		keywords := []string{}
		for _, k := range strings.Split(d.ImageMeta["keywords"], ",") {
			if k = strings.TrimSpace(k); k != "" {
				keywords = append(keywords, k)
			}
		}
		meta = append(meta, jsonMember{"keywords", keywords})
		o = append(o, jsonMember{"image_meta", meta})
	}
	if d.OriginalImage != "" {
		o = append(o, jsonMember{"original_image", d.OriginalImage})
	}
	return o.MarshalJSON()
}

// IsImage reports whether an attachment is an image (WordPress's wp_attachment_is_image).
func (a *Attachment) IsImage() bool { return a != nil && MediaType(a.MimeType) == "image" }

// OrderedSizes returns the attachment's sub-sizes in WordPress's order: ImageSizes first, then
// any other name alphabetically.
func (a *Attachment) OrderedSizes() []string {
	names := make([]string, 0, len(a.Sizes))
	for _, s := range ImageSizes {
		if _, ok := a.Sizes[s.Name]; ok {
			names = append(names, s.Name)
		}
	}
	var rest []string
	for n := range a.Sizes {
		if !slices.ContainsFunc(ImageSizes, func(s ImageSize) bool { return s.Name == n }) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// Details returns the attachment's media_details as the site serves them.
func (a *Attachment) Details(site Site) MediaDetails {
	if a == nil || a.File == "" {
		return MediaDetails{Empty: true}
	}
	d := MediaDetails{Image: a.IsImage(), Width: a.Width, Height: a.Height, File: a.File, FileSize: a.FileSize}
	if !d.Image {
		return d
	}
	d.ImageMeta = a.ImageMeta
	for _, name := range a.OrderedSizes() {
		s := a.Sizes[name]
		d.Sizes = append(d.Sizes, MediaSize{Name: name, File: path.Base(s.File), Width: s.Width, Height: s.Height,
			FileSize: s.FileSize, MimeType: s.MimeType, SourceURL: site.UploadURL(s.File)})
	}
	if len(d.Sizes) > 0 {
		d.Sizes = append(d.Sizes, MediaSize{Name: "full", File: path.Base(a.File), Width: a.Width, Height: a.Height,
			MimeType: a.MimeType, SourceURL: site.UploadURL(a.File)})
	}
	if a.Original != nil {
		d.OriginalImage = path.Base(a.Original.File)
	}
	return d
}

// MissingSizes returns the names of the sub-sizes WordPress would make for the image that it
// does not have yet (wp_get_missing_image_subsizes), judged on the original's dimensions; none
// for other files.
func (a *Attachment) MissingSizes() []string {
	out := []string{}
	if !a.IsImage() {
		return out
	}
	w, h := a.Width, a.Height
	if a.Original != nil && a.Original.Width > 0 {
		w, h = a.Original.Width, a.Original.Height
	}
	for _, s := range ImageSizes {
		if _, _, ok := ResizeDimensions(w, h, s); !ok {
			continue
		}
		if _, have := a.Sizes[s.Name]; !have {
			out = append(out, s.Name)
		}
	}
	return out
}

// MediaLink is an attachment's permalink under plain permalinks: its attachment page.
func (s Site) MediaLink(id PostID) string {
	return s.Base + "/?attachment_id=" + strconv.FormatInt(int64(id), 10)
}

// renderMedia completes the view of an attachment that RenderPost built with the fields every
// post type shares.
func renderMedia(p *Post, r PostRender, site Site, v *PostView) {
	a := p.Attachment
	if a == nil {
		a = &Attachment{}
	}
	edit, embed := r.Context == "edit", r.Context == "embed"
	src := ""
	if a.File != "" {
		src = site.UploadURL(a.File)
	}
	// The attachment type supports a title, an author, comments, a thumbnail and custom
	// fields: no content, excerpt, password, format or terms.
	v.Content, v.Password, v.Excerpt = nil, nil, Rendered{}
	v.Author, v.FeaturedMedia = ptr(p.Author), ptr(p.FeaturedMedia)
	description := mediaDescription(p, a, site)
	m := &MediaFields{
		Caption:      Rendered{Rendered: RenderExcerptWords(p.Excerpt, description, r.ExcerptWords)},
		AltText:      a.AltText,
		MediaType:    MediaType(a.MimeType),
		MimeType:     a.MimeType,
		MediaDetails: a.Details(site),
		SourceURL:    src,
	}
	if !embed {
		v.GUID = &Rendered{Rendered: src}
		v.CommentStatus, v.PingStatus = ptr(p.CommentStatus), ptr(p.PingStatus)
		meta := map[string]string{}
		for k, val := range p.Meta {
			meta[k] = val
		}
		v.Meta = &meta
		m.Description = &Rendered{Rendered: description}
		m.Post = ptr(nullPostID(p.Parent))
		file := path.Base(a.File)
		if a.Original != nil {
			file = path.Base(a.Original.File)
		}
		if a.File == "" {
			file = ""
		}
		m.Filename, m.Filesize = &file, ptr(a.FileSize)
	}
	if edit {
		v.GUID.Raw = ptr(src)
		m.Caption.Raw = ptr(p.Excerpt)
		m.Description.Raw = ptr(p.Content)
		m.MissingImageSizes = ptr(a.MissingSizes())
	}
	v.MediaFields = m

	id := strconv.FormatInt(int64(p.ID), 10)
	v.Links["author"] = []Link{{Href: site.RestURL("/cms/v2/users/" + strconv.FormatInt(int64(p.Author), 10)), Embeddable: true}}
	v.Links["replies"] = []Link{{Href: site.RestURL("/cms/v2/comments") + "&post=" + id, Embeddable: true}}
	if p.FeaturedMedia != 0 {
		v.Links["wp:featuredmedia"] = []Link{{Href: site.RestURL("/cms/v2/media/" + strconv.FormatInt(int64(p.FeaturedMedia), 10)), Embeddable: true}}
	}
	if p.Parent != 0 && r.Record != nil {
		// The record the attachment is attached to (WordPress 6.9), when it exists.
		if parent := r.Record(p.Parent); parent != nil && parent.ID != p.ID {
			if t := PostTypeByName(parent.Type); t != nil {
				v.Links["wp:attached-to"] = []Link{{Href: site.RestURL(t.Item(parent.ID)), Embeddable: true, PostType: t.Name, ID: ptr(parent.ID)}}
			}
		}
	}
}

// mediaDescription renders an attachment's description as WordPress's the_content does for an
// attachment: the file, linked (an image as its medium size with its srcset; any other file by
// its title), in a <p class="attachment"> before the description's own paragraphs.
// (WordPress renders audio and video with its media players; here they are linked like files.)
func mediaDescription(p *Post, a *Attachment, site Site) string {
	if a.File == "" {
		return RenderContent(p.Content)
	}
	var b strings.Builder
	full := site.UploadURL(a.File)
	b.WriteString(`<p class="attachment"><a href='`)
	b.WriteString(html.EscapeString(full))
	b.WriteString(`'>`)
	if a.IsImage() && a.Width > 0 && a.Height > 0 {
		b.WriteString(mediaImageTag(a, "medium", site))
	} else {
		text := p.Title
		if strings.TrimSpace(text) == "" {
			text = html.EscapeString(strings.TrimSuffix(path.Base(a.File), path.Ext(a.File)))
		}
		b.WriteString(text)
	}
	b.WriteString("</a></p>\n")
	b.WriteString(RenderContent(p.Content))
	return b.String()
}

// mediaImageTag is WordPress's wp_get_attachment_image for a registered size: the size's file
// (or the full file constrained to the size's box when the size was not made), its srcset of the
// files with the same crop up to MaxSrcsetWidth, src first, and its sizes attribute.
func mediaImageTag(a *Attachment, size string, site Site) string {
	var box ImageSize
	for _, s := range ImageSizes {
		if s.Name == size {
			box = s
		}
	}
	file, w, h := a.File, a.Width, a.Height
	if s, ok := a.Sizes[size]; ok {
		file, w, h = s.File, s.Width, s.Height
	} else {
		w, h = ConstrainDimensions(w, h, box.Width, box.Height)
	}
	src := site.UploadURL(file)
	var bb bytes.Buffer
	bb.WriteString(`<img width="` + strconv.Itoa(w) + `" height="` + strconv.Itoa(h) + `" src="` + html.EscapeString(src) +
		`" class="attachment-` + size + ` size-` + size + `" alt="` + html.EscapeString(strings.TrimSpace(tag.ReplaceAllString(a.AltText, ""))) +
		`" decoding="async" loading="lazy"`)
	// srcset: every file of the same crop, keyed by width, the src first (wp_calculate_image_srcset).
	type source struct {
		url   string
		width int
	}
	var sources []source
	seen := map[int]bool{}
	candidates := make([]AttachmentSize, 0, len(a.Sizes)+1)
	for _, n := range a.OrderedSizes() {
		candidates = append(candidates, a.Sizes[n])
	}
	if th, ok := a.Sizes["thumbnail"]; !ok || th.MimeType != "image/gif" {
		candidates = append(candidates, AttachmentSize{File: a.File, Width: a.Width, Height: a.Height})
	}
	matched := false
	for _, c := range candidates {
		isSrc := !matched && c.File == file
		matched = matched || isSrc
		if c.Width > MaxSrcsetWidth && !isSrc || !matchesRatio(w, h, c.Width, c.Height) {
			continue
		}
		s := source{site.UploadURL(c.File), c.Width}
		switch {
		case isSrc && seen[c.Width]:
			i := slices.IndexFunc(sources, func(x source) bool { return x.width == c.Width })
			sources = append(append([]source{s}, sources[:i]...), sources[i+1:]...)
		case isSrc:
			sources = append([]source{s}, sources...)
		case seen[c.Width]:
			i := slices.IndexFunc(sources, func(x source) bool { return x.width == c.Width })
			sources[i] = s
		default:
			sources = append(sources, s)
		}
		seen[c.Width] = true
	}
	if matched && len(sources) >= 2 {
		parts := make([]string, len(sources))
		for i, s := range sources {
			parts[i] = strings.ReplaceAll(s.url, " ", "%20") + " " + strconv.Itoa(s.width) + "w"
		}
		bb.WriteString(` srcset="` + html.EscapeString(strings.Join(parts, ", ")) + `"`)
		bb.WriteString(` sizes="auto, (max-width: ` + strconv.Itoa(w) + `px) 100vw, ` + strconv.Itoa(w) + `px"`)
	}
	bb.WriteString(" />")
	return bb.String()
}

// uploadMimeTypes are the MIME types of WordPress's default upload list (wp_get_mime_types), less
// those only users with unfiltered_html may upload (HTML, JavaScript, Flash, executables): what
// the media collection's mime_type filter accepts.
var uploadMimeTypes = []string{
	"image/jpeg", "image/gif", "image/png", "image/bmp", "image/tiff", "image/webp", "image/avif", "image/x-icon",
	"image/heic", "image/heif", "image/heic-sequence", "image/heif-sequence",
	"video/x-ms-asf", "video/x-ms-wmv", "video/x-ms-wmx", "video/x-ms-wm", "video/avi", "video/divx", "video/x-flv",
	"video/quicktime", "video/mpeg", "video/mp4", "video/ogg", "video/webm", "video/x-matroska", "video/3gpp", "video/3gpp2",
	"text/plain", "text/csv", "text/tab-separated-values", "text/calendar", "text/richtext", "text/css", "text/vtt",
	"application/ttaf+xml",
	"audio/mpeg", "audio/aac", "audio/x-realaudio", "audio/wav", "audio/ogg", "audio/flac", "audio/midi", "audio/x-ms-wma",
	"audio/x-ms-wax", "audio/x-matroska",
	"application/rtf", "application/pdf", "application/java", "application/x-tar", "application/zip", "application/x-gzip",
	"application/rar", "application/x-7z-compressed", "application/octet-stream",
	"application/msword", "application/vnd.ms-powerpoint", "application/vnd.ms-write", "application/vnd.ms-excel",
	"application/vnd.ms-access", "application/vnd.ms-project",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "application/vnd.ms-word.document.macroEnabled.12",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.template", "application/vnd.ms-word.template.macroEnabled.12",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "application/vnd.ms-excel.sheet.macroEnabled.12",
	"application/vnd.ms-excel.sheet.binary.macroEnabled.12", "application/vnd.openxmlformats-officedocument.spreadsheetml.template",
	"application/vnd.ms-excel.template.macroEnabled.12", "application/vnd.ms-excel.addin.macroEnabled.12",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation", "application/vnd.ms-powerpoint.presentation.macroEnabled.12",
	"application/vnd.openxmlformats-officedocument.presentationml.slideshow", "application/vnd.ms-powerpoint.slideshow.macroEnabled.12",
	"application/vnd.openxmlformats-officedocument.presentationml.template", "application/vnd.ms-powerpoint.template.macroEnabled.12",
	"application/vnd.ms-powerpoint.addin.macroEnabled.12", "application/vnd.openxmlformats-officedocument.presentationml.slide",
	"application/vnd.ms-powerpoint.slide.macroEnabled.12", "application/onenote", "application/oxps", "application/vnd.ms-xpsdocument",
	"application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.presentation",
	"application/vnd.oasis.opendocument.spreadsheet", "application/vnd.oasis.opendocument.graphics",
	"application/vnd.oasis.opendocument.chart", "application/vnd.oasis.opendocument.database",
	"application/vnd.oasis.opendocument.formula", "application/wordperfect",
	"application/vnd.apple.keynote", "application/vnd.apple.numbers", "application/vnd.apple.pages",
}

// MediaMimeFilter returns the MIME types of a media collection's mime_type argument that filter
// it: WordPress keeps only types of its upload list and ignores the others, so a collection
// asked only for unknown types is not filtered by them.
func MediaMimeFilter(given []string) []string {
	var out []string
	for _, m := range given {
		if slices.Contains(uploadMimeTypes, m) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}
