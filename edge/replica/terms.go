package replica

import (
	"cmp"
	"slices"
	"strings"

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
	v, err := decode[schema.Term](c, b.intern)
	if err != nil {
		return err
	}
	s, _ := b.mm.terms.Get(id)
	if _, applied := put(&s, c, v, b); applied {
		b.mm.terms.Set(id, s)
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

// ChildTerms returns the snapshot's term hierarchy as PostQuery.ChildTerms wants it: the
// descendants of a category at every depth (WordPress's get_term_children), by taxonomy rest
// base. Other taxonomies (tags, and every non-category filter) are flat: no children. The
// parent-to-children map is built on the first call, once per query.
func (s *Snapshot) ChildTerms() func(taxonomy string, id schema.TermID) []schema.TermID {
	var children map[schema.TermID][]schema.TermID
	return func(taxonomy string, id schema.TermID) []schema.TermID {
		if taxonomy != schema.TaxonomyBase(schema.TaxCategory) {
			return nil
		}
		if children == nil {
			children = map[schema.TermID][]schema.TermID{}
			for _, t := range s.Terms(schema.TaxCategory) {
				if t.Parent != 0 {
					children[t.Parent] = append(children[t.Parent], t.ID)
				}
			}
		}
		var out []schema.TermID
		seen := map[schema.TermID]bool{id: true} // a cycle cannot be written; it would not loop here
		for next := []schema.TermID{id}; len(next) > 0; {
			parent := next[0]
			next = next[1:]
			for _, c := range children[parent] {
				if !seen[c] {
					seen[c] = true
					out = append(out, c)
					next = append(next, c)
				}
			}
		}
		return out
	}
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

// EmbedTerms gives the embed-context views of a post's terms in a taxonomy, by name as the
// terms collection lists them (reads.TermEmbedder: a post's _embed of wp:term). Post bodies
// depend on the Posts class, which term changes bump, so embedded terms are never stale.
func (s *Snapshot) EmbedTerms(p *schema.Post, taxonomy string, site schema.Site) []any {
	ids := p.Categories
	if taxonomy == schema.TaxTag {
		ids = p.Tags
	}
	var terms []*schema.Term
	for _, id := range ids {
		if t := s.Term(id); t != nil && t.Taxonomy == taxonomy {
			terms = append(terms, t)
		}
	}
	slices.SortStableFunc(terms, func(a, b *schema.Term) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.ID, b.ID))
	})
	out := make([]any, 0, len(terms))
	for _, t := range terms {
		out = append(out, schema.RenderTerm(t, "embed", 0, nil, site))
	}
	return out
}
