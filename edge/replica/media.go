package replica

import (
	"slices"
	"strings"

	"github.com/benbjohnson/immutable"

	"vitrine/schema"
)

// Media: attachments are CMS records (type attachment) like posts, in the same maps and queries.
// What they add is the file index: every file of a public attachment (its file, the original a
// scaled file was made from, each sub-size), by its path under the uploads root, so that an
// edge's file server finds the blob behind a URL in one map lookup. The index is built from the
// public slots only, as attachments are applied and tombstoned: the origin replicates an
// attachment publicly only while it is public (status inherit, and no parent or a public one),
// so a private, trashed or draft-parented attachment's files are never in it. A lookup checks
// the parent again: a file is served only while the attachment and its parent (if any) have
// public states in the same snapshot.

func emptyMediaFiles() *immutable.Map[string, schema.PostID] {
	return immutable.NewMap[string, schema.PostID](stringHasher{})
}

// attachmentFiles returns the paths of an attachment's files.
func attachmentFiles(a *schema.Attachment) []string {
	if a == nil || a.File == "" {
		return nil
	}
	files := []string{a.File}
	if a.Original != nil && a.Original.File != "" {
		files = append(files, a.Original.File)
	}
	for _, s := range a.Sizes {
		if s.File != "" {
			files = append(files, s.File)
		}
	}
	return files
}

// indexMedia updates the file index after the public state of record id went from old to cur
// (either may be nil, or not an attachment). An entry is removed only if it still names this
// record: a name another attachment took over is left alone.
func (b *builder) indexMedia(id schema.PostID, old, cur *schema.Post) {
	if old != nil && old.Type == schema.TypeAttachment {
		for _, f := range attachmentFiles(old.Attachment) {
			if owner, ok := b.mm.media.Get(f); ok && owner == id {
				b.mm.media.Delete(f)
			}
		}
	}
	if cur != nil && cur.Type == schema.TypeAttachment {
		for _, f := range attachmentFiles(cur.Attachment) {
			b.mm.media.Set(f, id)
		}
	}
}

// MediaFile returns the public media file at path under the uploads root
// ("2026/11/photo-9f86d081884c-150x150.jpg") of the tenant whose internal id is tenantID, and
// false when no public attachment of this snapshot has a file there.
func (s *Snapshot) MediaFile(tenantID, path string) (schema.MediaFile, bool) {
	id, ok := s.merch.media.Get(path)
	if !ok {
		return schema.MediaFile{}, false
	}
	p := s.Post(id, Public)
	if p == nil || p.Type != schema.TypeAttachment || !p.Public() {
		return schema.MediaFile{}, false
	}
	if p.Parent != 0 && s.Post(p.Parent, Public) == nil {
		return schema.MediaFile{}, false // the parent is not public (anymore): neither are its files
	}
	a := p.Attachment
	f := schema.MediaFile{BlobName: schema.MediaBlobName(tenantID, path), Modified: p.DateGMT}
	switch {
	case a.File == path:
		f.ContentType, f.Size, f.SHA256 = a.MimeType, a.FileSize, a.SHA256
	case a.Original != nil && a.Original.File == path:
		f.ContentType, f.Size, f.SHA256 = cmpOr(a.Original.MimeType, a.MimeType), a.Original.FileSize, a.Original.SHA256
	default:
		found := false
		for _, sz := range a.Sizes {
			if sz.File == path {
				f.ContentType, f.Size, f.SHA256, found = cmpOr(sz.MimeType, a.MimeType), sz.FileSize, sz.SHA256, true
				break
			}
		}
		if !found {
			return schema.MediaFile{}, false
		}
	}
	return f, true
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// MediaFile is Snapshot.MediaFile on the tenant's current snapshot, for the tenant's registry
// entry; false while the registry does not name the tenant.
func (t *Tenant) MediaFile(path string) (schema.MediaFile, bool) {
	info := t.Info()
	if info == nil {
		return schema.MediaFile{}, false
	}
	return t.Snapshot().MediaFile(info.ID, path)
}

// MediaFileCount is the number of files in the snapshot's public file index.
func (s *Snapshot) MediaFileCount() int { return s.merch.media.Len() }

// matchMime applies the media collection's MIME filters (PostQuery.MimeTypes and MediaTypes):
// a record passes when no filter is set, or when it is an attachment whose MIME type is one of
// MimeTypes or whose top-level type is one of MediaTypes.
func matchMime(p *schema.Post, q *PostQuery) bool {
	if len(q.MimeTypes) == 0 && len(q.MediaTypes) == 0 {
		return true
	}
	if p.Attachment == nil {
		return false
	}
	mime := p.Attachment.MimeType
	top, _, _ := strings.Cut(mime, "/")
	return slices.Contains(q.MimeTypes, mime) || slices.Contains(q.MediaTypes, top)
}

// matchFileName reports whether an attachment's file name contains the lower-case word: a
// media search also looks at file names (WordPress's wp_allow_query_attachment_by_filename).
func matchFileName(p *schema.Post, w string) bool {
	return p.Attachment != nil && containsFold(p.Attachment.File, w)
}
