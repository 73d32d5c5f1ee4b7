package replica

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"vitrine/schema"
)

// Scope says whose view a query takes.
type Scope int

// Scopes.
const (
	// Public is what anyone may read: public slots only. Edges only ever have this.
	Public Scope = iota
	// Full is what a caller allowed to read everything sees: the private state where there is one.
	Full
)

func pick[T any](s slot[T], scope Scope) *T {
	if scope == Full {
		return s.effective()
	}
	return s.pub
}

// ProductBySlug returns the public product with the slug, or nil.
func (s *Snapshot) ProductBySlug(slug string) *schema.Product {
	id, ok := s.slugs.Get(slug)
	if !ok {
		return nil
	}
	return s.Product(id, Public)
}

// Product returns a product by id in the scope, or nil.
func (s *Snapshot) Product(id schema.ProductID, scope Scope) *schema.Product {
	sl, ok := s.products.Get(id)
	if !ok {
		return nil
	}
	return pick(sl, scope)
}

// Variants returns the public variants of a product, ordered by position then id.
func (s *Snapshot) Variants(id schema.ProductID) []*schema.Variant {
	ids, _ := s.byProduct.Get(id)
	out := make([]*schema.Variant, 0, len(ids))
	for _, vid := range ids {
		if sl, ok := s.variants.Get(vid); ok && sl.pub != nil {
			out = append(out, sl.pub)
		}
	}
	return out
}

// ProductCount is the number of public products.
func (s *Snapshot) ProductCount() int { return s.order.Len() }

// Products returns public products newest first: limit of them after skipping offset, and the
// total count.
func (s *Snapshot) Products(offset, limit int) ([]*schema.Product, int) {
	offset, limit = max(offset, 0), max(limit, 0)
	total := s.order.Len()
	out := make([]*schema.Product, 0, max(0, min(limit, total-offset)))
	it := s.order.Iterator()
	for i := 0; !it.Done() && len(out) < limit; i++ {
		_, id, _ := it.Next()
		if i < offset {
			continue
		}
		if p := s.Product(id, Public); p != nil {
			out = append(out, p)
		}
	}
	return out, total
}

// Featured returns up to limit public featured products, newest first.
func (s *Snapshot) Featured(limit int) []*schema.Product {
	out := make([]*schema.Product, 0, min(max(limit, 0), s.featured.Len()))
	it := s.featured.Iterator()
	for !it.Done() && len(out) < limit {
		_, id, _ := it.Next()
		if p := s.Product(id, Public); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// Category returns a public category, or nil.
func (s *Snapshot) Category(id schema.CategoryID) *schema.Category {
	sl, ok := s.categories.Get(id)
	if !ok {
		return nil
	}
	return sl.pub
}

// Categories returns every public category, ordered by id.
func (s *Snapshot) Categories() []*schema.Category {
	out := make([]*schema.Category, 0, s.categories.Len())
	it := s.categories.Iterator()
	for !it.Done() {
		_, sl, _ := it.Next()
		if sl.pub != nil {
			out = append(out, sl.pub)
		}
	}
	slices.SortFunc(out, func(a, b *schema.Category) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Currency returns a public currency by code, or nil.
func (s *Snapshot) Currency(code string) *schema.Currency {
	sl, ok := s.currencies.Get(code)
	if !ok {
		return nil
	}
	return sl.pub
}

// Currencies returns the public currencies ordered by code.
func (s *Snapshot) Currencies() []*schema.Currency {
	out := make([]*schema.Currency, 0, s.currencies.Len())
	it := s.currencies.Iterator()
	for !it.Done() {
		_, sl, _ := it.Next()
		if sl.pub != nil {
			out = append(out, sl.pub)
		}
	}
	slices.SortFunc(out, func(a, b *schema.Currency) int { return strings.Compare(a.Code, b.Code) })
	return out
}

// Post returns a post by id in the scope, or nil.
func (s *Snapshot) Post(id schema.PostID, scope Scope) *schema.Post {
	sl, ok := s.posts.Get(id)
	if !ok {
		return nil
	}
	return pick(sl, scope)
}

// PostQuery selects posts. Zero values select the published posts, newest first; Limit bounds
// how many are returned (0 returns none, only the total).
type PostQuery struct {
	Scope    Scope
	Statuses []schema.PostStatus // empty: publish only
	Include  []schema.PostID
	Exclude  []schema.PostID
	Slugs    []string
	// OrderBy is date (default), id, modified, slug or title; Asc reverses the default descending
	// order.
	OrderBy string
	Asc     bool
	Offset  int
	Limit   int
}

// Posts returns the posts matching q (Limit of them after Offset) and the total match count.
func (s *Snapshot) Posts(q PostQuery) ([]*schema.Post, int) {
	q.Offset, q.Limit = max(q.Offset, 0), max(q.Limit, 0)
	statuses := q.Statuses
	if len(statuses) == 0 {
		statuses = []schema.PostStatus{schema.StatusPublish}
	}
	filtered := len(q.Include) > 0 || len(q.Exclude) > 0 || len(q.Slugs) > 0
	// The common query (public, published, newest first, unfiltered) walks the ordered index.
	if q.Scope == Public && !filtered && (q.OrderBy == "" || q.OrderBy == "date") && !q.Asc &&
		len(statuses) == 1 && statuses[0] == schema.StatusPublish {
		total := s.postOrder.Len()
		out := make([]*schema.Post, 0, max(0, min(q.Limit, total-q.Offset)))
		it := s.postOrder.Iterator()
		for i := 0; !it.Done() && len(out) < q.Limit; i++ {
			_, id, _ := it.Next()
			if i >= q.Offset {
				if p := s.Post(id, Public); p != nil {
					out = append(out, p)
				}
			}
		}
		return out, total
	}
	var all []*schema.Post
	it := s.posts.Iterator()
	for !it.Done() {
		_, sl, _ := it.Next()
		p := pick(sl, q.Scope)
		if p == nil || !slices.Contains(statuses, p.Status) {
			continue
		}
		if len(q.Include) > 0 && !slices.Contains(q.Include, p.ID) || slices.Contains(q.Exclude, p.ID) {
			continue
		}
		if len(q.Slugs) > 0 && !slices.Contains(q.Slugs, p.Slug) {
			continue
		}
		all = append(all, p)
	}
	slices.SortFunc(all, func(a, b *schema.Post) int {
		var c int
		switch q.OrderBy {
		case "id":
			c = cmp.Compare(a.ID, b.ID)
		case "modified":
			c = a.ModifiedGMT.Compare(b.ModifiedGMT)
		case "slug":
			c = strings.Compare(a.Slug, b.Slug)
		case "title":
			c = strings.Compare(strings.ToLower(a.Title), strings.ToLower(b.Title))
		default:
			c = a.DateGMT.Compare(b.DateGMT)
		}
		if c == 0 {
			c = cmp.Compare(a.ID, b.ID)
		}
		if !q.Asc {
			c = -c
		}
		return c
	})
	total := len(all)
	if q.Offset >= total {
		return nil, total
	}
	return all[q.Offset:min(total, q.Offset+q.Limit)], total
}

// Digest summarises the snapshot's states at the visibilities given (schema.Digest), re-encoding
// each entity as a writer would.
func (s *Snapshot) Digest(log string, vis ...schema.Visibility) *schema.Digest {
	d := &schema.Digest{}
	add := func(kind schema.Kind, id string, pub, priv any, pubOK, privOK bool) {
		for _, v := range vis {
			var val any
			switch {
			case v == schema.Pub && pubOK:
				val = pub
			case v == schema.Priv && privOK:
				val = priv
			default:
				continue
			}
			b, err := json.Marshal(val)
			if err != nil {
				panic("replica: digest: " + err.Error())
			}
			d.Add(log, kind, id, v, b)
		}
	}
	for it := s.products.Iterator(); !it.Done(); {
		id, sl, _ := it.Next()
		add(schema.KindProduct, schema.IDString(id), sl.pub, sl.priv, sl.pub != nil, sl.priv != nil)
	}
	for it := s.variants.Iterator(); !it.Done(); {
		id, sl, _ := it.Next()
		add(schema.KindVariant, schema.IDString(id), sl.pub, sl.priv, sl.pub != nil, sl.priv != nil)
	}
	for it := s.categories.Iterator(); !it.Done(); {
		id, sl, _ := it.Next()
		add(schema.KindCategory, schema.IDString(id), sl.pub, sl.priv, sl.pub != nil, sl.priv != nil)
	}
	for it := s.currencies.Iterator(); !it.Done(); {
		code, sl, _ := it.Next()
		add(schema.KindCurrency, code, sl.pub, sl.priv, sl.pub != nil, sl.priv != nil)
	}
	for it := s.posts.Iterator(); !it.Done(); {
		id, sl, _ := it.Next()
		add(schema.KindPost, schema.IDString(id), sl.pub, sl.priv, sl.pub != nil, sl.priv != nil)
	}
	s.digestMerch(add)
	return d
}
