package replica

import "vitrine/schema"

// PublishedAuthors returns how many published posts each user wrote: the users whose profiles
// are public (WordPress shows anonymous callers only authors of published posts).
func (s *Snapshot) PublishedAuthors() map[schema.UserID]int {
	out := map[schema.UserID]int{}
	for it := s.postOrder.Iterator(); !it.Done(); {
		_, id, _ := it.Next()
		if p := s.Post(id, Public); p != nil && p.Status == schema.StatusPublish {
			out[p.Author]++
		}
	}
	return out
}
