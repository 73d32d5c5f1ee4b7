package replica

import (
	"cmp"
	"slices"

	"github.com/benbjohnson/immutable"

	"vitrine/schema"
)

// CMS terms (categories and tags) are public and replicated whole. They ride in the merch
// struct (merch.go) to share its copy-on-write plumbing; a term change bumps the Posts class,
// which every term body depends on, since a term's count is derived from the posts (TermCounts).

func emptyTerms() *immutable.Map[schema.TermID, slot[schema.Term]] {
	return immutable.NewMap[schema.TermID, slot[schema.Term]](intHasher[schema.TermID]{})
}

// applyTerm applies a change of a CMS term.
func (b *builder) applyTerm(c *schema.Change) error {
	id, err := parseID[schema.TermID](c)
	if err != nil {
		return err
	}
	v, err := decode[schema.Term](c)
	if err != nil {
		return err
	}
	m := &b.merch
	s, _ := m.terms.Get(id)
	if _, applied := put(&s, c, v, &b.bytes); applied {
		m.terms = m.terms.Set(id, s)
		b.dirty.posts = true
	}
	return nil
}

// Term returns a term by id, or nil.
func (s *Snapshot) Term(id schema.TermID) *schema.Term {
	sl, _ := s.merch.terms.Get(id)
	return sl.pub
}

// Terms returns the terms of a taxonomy by id.
func (s *Snapshot) Terms(taxonomy string) []*schema.Term {
	var out []*schema.Term
	for it := s.merch.terms.Iterator(); !it.Done(); {
		_, sl, _ := it.Next()
		if sl.pub != nil && sl.pub.Taxonomy == taxonomy {
			out = append(out, sl.pub)
		}
	}
	slices.SortFunc(out, func(a, b *schema.Term) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// TermCounts returns how many published posts carry each term of the taxonomy (WordPress's
// term count). It walks the public posts: one pass per rendered term body, which the edge
// caches until a post or a term changes.
func (s *Snapshot) TermCounts(taxonomy string) map[schema.TermID]int {
	counts := map[schema.TermID]int{}
	for it := s.postOrder.Iterator(); !it.Done(); {
		_, id, _ := it.Next()
		p := s.Post(id, Public)
		if p == nil || p.Status != schema.StatusPublish {
			continue
		}
		ids := p.Categories
		if taxonomy == schema.TaxTag {
			ids = p.Tags
		}
		for _, t := range ids {
			counts[t]++
		}
	}
	return counts
}

func (s *Snapshot) digestTerms(add func(kind schema.Kind, id string, pub, priv any, pubOK, privOK bool)) {
	for it := s.merch.terms.Iterator(); !it.Done(); {
		id, sl, _ := it.Next()
		add(schema.KindTerm, schema.IDString(id), sl.pub, nil, sl.pub != nil, false)
	}
}
