package replica

import (
	"vitrine/schema"
)

// Authors' public profiles (schema.Author) are replicated whole, pub state only. They ride in the
// merch struct with the terms; a change bumps the Posts class, since a post body embedding its
// author (_embed) depends on the profile.

// applyAuthor applies a change of an author's public profile.
func (b *builder) applyAuthor(c *schema.Change) error {
	id, err := parseID[schema.UserID](c)
	if err != nil {
		return err
	}
	v, err := decode[schema.Author](c, b.intern)
	if err != nil {
		return err
	}
	s, _ := b.mm.authors.Get(id)
	if _, applied := put(&s, c, v, b); applied {
		b.mm.authors.Set(id, s)
		b.dirty.posts = true
	}
	return nil
}

// Author returns an author's public profile by user id, or nil.
func (s *Snapshot) Author(id schema.UserID) *schema.Author {
	sl, _ := s.merch.authors.Get(id)
	return sl.pub
}

// EmbedAuthor gives an author's embed-context view (reads.AuthorEmbedder: a post's _embed of
// author), or nil when the user is unknown.
func (s *Snapshot) EmbedAuthor(id schema.UserID, site schema.Site) any {
	if a := s.Author(id); a != nil {
		return schema.RenderAuthor(a, site)
	}
	return nil
}

func (s *Snapshot) digestAuthors(add func(kind schema.Kind, id string, pub, priv any, pubOK, privOK bool)) {
	for it := s.merch.authors.Iterator(); !it.Done(); {
		id, sl, _ := it.Next()
		add(schema.KindAuthor, schema.IDString(id), sl.pub, nil, sl.pub != nil, false)
	}
}

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
