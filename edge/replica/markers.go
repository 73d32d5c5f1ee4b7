package replica

import "vitrine/schema"

// applyMarker applies a CMS record's existence marker (schema.KindPostMarker). A marker change
// touches the record's own cached answers (its item counter): an anonymous 401 for a draft must
// not outlive its publication, nor a 200 its unpublication.
func (b *builder) applyMarker(c *schema.Change) error {
	id, err := parseID[schema.PostID](c)
	if err != nil {
		return err
	}
	v, err := decode[schema.PostMarker](c, b.intern)
	if err != nil {
		return err
	}
	s, _ := b.mm.markers.Get(id)
	if _, applied := put(&s, c, v, b); applied {
		b.mm.markers.Set(id, s)
		if b.dirty.postItems == nil {
			b.dirty.postItems = map[schema.PostID]bool{}
		}
		b.dirty.postItems[id] = true
	}
	return nil
}

// PostMarker returns the existence marker of a record without a public state, or nil: the record
// is public (see Post) or does not exist.
func (s *Snapshot) PostMarker(id schema.PostID) *schema.PostMarker {
	sl, _ := s.merch.markers.Get(id)
	return sl.pub
}
