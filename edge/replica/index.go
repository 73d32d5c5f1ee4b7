package replica

import (
	"slices"

	"vitrine/edge/search"
	"vitrine/schema"
	"vitrine/sync/feed"
)

// The search index of a tenant's public products lives in its Snapshot: the pointer swap that
// publishes a batch publishes the batch's index with it, so a reader holding a Snapshot holds the
// index of exactly that Snapshot's products, prices and availabilities.
//
// A product's document depends on the product (title, description, categories, price in the
// store's default currency, featured, creation date) and on its public variants (the best
// availability). The builder marks a product dirty when its public slot or one of its public
// variants changes, so the documents to redo are exactly the batch's dirty products.

// SearchIndex returns the search index of the snapshot's public products and the currency its
// prices are in: the store's default currency when the index was made ("" before the registry
// named the store). A price filter or sort may use the index's prices only in that currency.
func (s *Snapshot) SearchIndex() (*search.Index, string) { return s.index, s.indexCur }

// nextIndex returns the index of s, the snapshot a batch that changed the products in changed
// made from old: old's index updated with those products' documents, or a new one built over
// every public product when old has none to update or its prices are in another currency.
// best, when not nil, is the best availability of the public variants of every product of s
// that has any (the fresh builder's, listVariants). A new index is read from img, a snapshot's
// image of the tenant's index, when img is of s's version and currency and matches s's
// documents (search.LoadImage checks): used reports that it was, imgErr why img was not used.
func nextIndex(old, s *Snapshot, changed map[schema.ProductID]bool, cur string, best map[schema.ProductID]schema.Availability, img *feed.Annex) (ix *search.Index, used bool, imgErr error) {
	if old.index == nil || old.indexCur != cur || old.index.Len() == 0 {
		docs := allDocs(s, cur, best)
		if img == nil {
			return search.Build(docs), false, nil
		}
		ix, err := imageIndex(img, s.Version, cur, docs)
		if err != nil {
			return search.Build(docs), false, err
		}
		return ix, true, nil
	}
	if img != nil {
		imgErr = errImageNotFirst
	}
	if len(changed) == 0 {
		return old.index, false, imgErr
	}
	ids := make([]schema.ProductID, 0, len(changed))
	for id := range changed {
		ids = append(ids, id)
	}
	slices.Sort(ids) // the same batch makes the same index, whatever the map order
	var ups []*search.Doc
	var dels []schema.ProductID
	for _, id := range ids {
		d := productDoc(s, id, cur)
		if d == nil {
			dels = append(dels, id)
			continue
		}
		if prev, ok := old.index.Get(id); ok && sameDoc(prev, d) {
			continue // a variant change that moved nothing the index knows
		}
		ups = append(ups, d)
	}
	return old.index.With(ups, dels), false, imgErr
}

// buildIndex indexes every public product of s in one pass.
func buildIndex(s *Snapshot, cur string) *search.Index {
	return search.Build(allDocs(s, cur, nil))
}

// allDocs returns the documents of every public, active product of s, newest first: productDoc
// of each product of s.order, in its order. It walks the products and the variants once each
// instead of looking each product and each of its variants up in the persistent maps, which
// cost more than all else of a bootstrap's documents (a cache miss per level of each lookup).
// best is as for nextIndex; when nil, allDocs makes it.
func allDocs(s *Snapshot, cur string, best map[schema.ProductID]schema.Availability) []*search.Doc {
	if best == nil {
		best = bestAvailabilities(s)
	}
	type keyed struct {
		k orderKey
		p *schema.Product
	}
	ps := make([]keyed, 0, s.order.Len())
	for it := s.products.Iterator(); !it.Done(); {
		_, sl, _ := it.Next()
		if p := sl.pub; p != nil && p.Public() {
			ps = append(ps, keyed{productKey(p), p})
		}
	}
	slices.SortFunc(ps, func(a, b keyed) int { return newestFirst{}.Compare(a.k, b.k) }) // s.order's order
	docs := make([]*search.Doc, len(ps))
	for i, kp := range ps {
		d := search.DocOf(kp.p, nil, cur)
		if a, ok := best[kp.p.ID]; ok {
			d.Availability = a
		}
		docs[i] = d
	}
	return docs
}

// bestAvailabilities returns the best availability of the public variants of every product of s
// that has any (schema.BestAvailability, whose result does not depend on the variants' order; by
// availRank, as listVariants folds it). A
// public variant is in its product's list (byProduct) by the builder's invariant.
func bestAvailabilities(s *Snapshot) map[schema.ProductID]schema.Availability {
	best := make(map[schema.ProductID]schema.Availability, s.byProduct.Len())
	for it := s.variants.Iterator(); !it.Done(); {
		_, sl, _ := it.Next()
		v := sl.pub
		if v == nil {
			continue
		}
		if b, ok := best[v.ProductID]; !ok || availRank(v.Availability) > availRank(b) {
			best[v.ProductID] = rankAvail(availRank(v.Availability))
		}
	}
	return best
}

// productDoc returns the document of a public, active product, or nil when the product is not
// one (absent, deleted, or not active).
func productDoc(s *Snapshot, id schema.ProductID, cur string) *search.Doc {
	p := s.Product(id, Public)
	if p == nil || !p.Public() {
		return nil
	}
	return search.DocOf(p, s.Variants(id), cur)
}

func sameDoc(a, b *search.Doc) bool {
	return a.ID == b.ID && a.Slug == b.Slug && a.Title == b.Title && a.Description == b.Description &&
		slices.Equal(a.CategoryIDs, b.CategoryIDs) && a.Price == b.Price && a.Availability == b.Availability &&
		a.Featured == b.Featured && a.CreatedAt.Equal(b.CreatedAt)
}

// reindex rebuilds the tenant's index when the store's default currency is no longer the one its
// prices are in, and publishes it in a copy of the current snapshot (same version, same
// entities). Follower goroutine only; the caller bumps the counters after.
func (t *Tenant) reindex(cur string) bool {
	old := t.snap.Load()
	if old.indexCur == cur {
		return false
	}
	s := *old
	s.index, s.indexCur = buildIndex(&s, cur), cur
	t.snap.Store(&s)
	return true
}
