package schema

// KindPostMarker is the existence marker of a CMS record that has no public state (a draft, a
// pending, scheduled, private or trashed record): public, so that an edge tells a record it may
// not show from one that does not exist, as WordPress does (401/403 rest_forbidden against 404
// rest_post_invalid_id), without forwarding every unknown id to the origin.
const KindPostMarker Kind = "postmark"

// PostMarker is what an edge knows of a record without a public state: that it exists, its type
// and its status. Never a title, content, author or date.
type PostMarker struct {
	ID     PostID     `json:"id"`
	Type   string     `json:"type"`
	Status PostStatus `json:"status"`
}

// MarkerOf returns the existence marker of a record that has no public state, or nil: for a
// missing record and for a public one (whose public state says more).
func MarkerOf(p *Post) *PostMarker {
	if p == nil || p.Public() {
		return nil
	}
	return &PostMarker{ID: p.ID, Type: p.Type, Status: p.Status}
}
