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

// PostQuery and Posts are in posts.go.

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
