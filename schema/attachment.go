package schema

import (
	"strings"
	"time"
)

// Media (WordPress attachments) share the Post record and its id space, as menu items do: an
// attachment is a Post of type "attachment" whose caption is the Post's Excerpt, whose
// description is its Content, and whose file facts are its Attachment. The files themselves are
// blobs (sync/blob), named by MediaBlobName, served by edges at Site.UploadURL.
//
// File names are content-addressed: an original's name carries the first 12 hex digits of the
// SHA-256 of its stored bytes ("2026/11/photo-9f86d081884c.jpg"), a sub-size adds its
// dimensions ("2026/11/photo-9f86d081884c-150x150.jpg"). A name is never reused for other bytes
// (an edit makes a new attachment with new bytes), so edges may cache files forever.

// UploadsPath is the path prefix under which edges serve a store's media files.
const UploadsPath = "/cms-content/uploads/"

// Attachment is what an attachment holds beyond the Post record.
type Attachment struct {
	// MimeType is the sniffed type of the original ("image/jpeg").
	MimeType string `json:"mime_type"`
	// File is the original's path under the uploads root ("2026/11/photo-9f86d081884c.jpg").
	File string `json:"file"`
	// Width and Height are the original's pixel dimensions (0 for files that are not images).
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// FileSize is the original's length in bytes; SHA256 its hex digest.
	FileSize int64  `json:"filesize"`
	SHA256   string `json:"sha256"`
	// AltText is the image's alternative text.
	AltText string `json:"alt_text,omitempty"`
	// Sizes are the sub-sizes made so far, by size name ("thumbnail", "medium", …).
	Sizes map[string]AttachmentSize `json:"sizes,omitempty"`
	// Original is the untouched upload when File is a scaled-down copy of it (WordPress's
	// big-image threshold: the "-scaled" file), nil otherwise; media_details.original_image names
	// its file. Edges serve it like File.
	Original *AttachmentSize `json:"original,omitempty"`
	// ParentHidden is true while the attachment's parent (Post.Parent) is not public (a draft,
	// a pending, private or trashed record): then the attachment is not public either
	// (Post.Public), so a draft's media never reach an edge. The store keeps it in step with the
	// parent in the parent's own transactions.
	ParentHidden bool `json:"parent_hidden,omitempty"`
	// ParentImage names the attachment an edit was made from.
	ParentImage *ParentImage `json:"parent_image,omitempty"`
	// ImageMeta is WordPress's image_meta (camera, caption, copyright, …, from EXIF/IPTC before
	// the metadata was stripped), kept as strings.
	ImageMeta map[string]string `json:"image_meta,omitempty"`
}

// AttachmentSize is one sub-size of an image attachment.
type AttachmentSize struct {
	File     string `json:"file"` // path under the uploads root, like Attachment.File
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	MimeType string `json:"mime_type"`
	FileSize int64  `json:"filesize"`
	SHA256   string `json:"sha256"`
}

// ParentImage is the original an edited attachment was made from.
type ParentImage struct {
	AttachmentID PostID `json:"attachment_id"`
	File         string `json:"file"`
}

// UploadURL is the absolute URL at which edges serve a media file (an Attachment.File or an
// AttachmentSize.File).
func (s Site) UploadURL(file string) string { return s.Base + UploadsPath + file }

// MediaBlobName is the blob name of a tenant's media file: the tenant's internal id keeps
// stores apart in one bucket.
func MediaBlobName(tenantID, file string) string { return "media/" + tenantID + "/" + file }

// MediaType is the media_type of a MIME type: "image" for images, "file" otherwise (the item
// field; collection filters use the MIME type's top-level type).
func MediaType(mime string) string {
	if strings.HasPrefix(mime, "image/") {
		return "image"
	}
	return "file"
}

// MediaFile is what an edge needs to serve one public media file (an attachment's original, its
// scaled copy or a sub-size): the blob that holds it and the facts its headers carry. The replica
// gives it for a path under the uploads root (replica.Snapshot.MediaFile) only while the
// attachment is public.
type MediaFile struct {
	// BlobName is the file's name in the media blob store (MediaBlobName).
	BlobName string
	// ContentType is the file's MIME type.
	ContentType string
	// Size is the file's length in bytes; SHA256 the hex digest of its bytes (the ETag).
	Size   int64
	SHA256 string
	// Modified is the attachment's upload date (Last-Modified): the bytes under a name never
	// change, so the date stays put when the record is edited.
	Modified time.Time
}
