package replica

import (
	"cmp"
	"slices"

	"github.com/benbjohnson/immutable"

	"vitrine/schema"
)

// merch is a snapshot's merchandising state: flash sales, storefront sections, approved reviews
// and social-proof statistics. All of it is public; the maps are persistent like the catalog's.
// The sale and section lists are small (tens per store) and rebuilt whole when one changes, so
// readers get them as ready slices.
type merch struct {
	sales         *immutable.Map[schema.FlashSaleID, slot[schema.FlashSale]]
	sections      *immutable.Map[schema.SectionID, slot[schema.Section]]
	reviews       *immutable.Map[schema.ReviewID, slot[schema.Review]]
	reviewsByProd *immutable.Map[schema.ProductID, *immutable.SortedMap[orderKey, schema.ReviewID]]
	stats         *immutable.Map[schema.ProductID, slot[schema.ProductStats]]
	saleList      []*schema.FlashSale // by start, then id
	// terms are the CMS categories and tags (terms.go).
	terms       *immutable.Map[schema.TermID, slot[schema.Term]]
	sectionList []*schema.Section // by position, then id
	// authors are the staff users' public profiles (authors.go).
	authors *immutable.Map[schema.UserID, slot[schema.Author]]
	// markers are the existence markers of CMS records without a public state (markers.go).
	markers *immutable.Map[schema.PostID, slot[schema.PostMarker]]
	// media indexes the files of public attachments by path (media.go).
	media *immutable.Map[string, schema.PostID]
}

func emptyMerch() merch {
	return merch{
		sales:         immutable.NewMap[schema.FlashSaleID, slot[schema.FlashSale]](intHasher[schema.FlashSaleID]{}),
		sections:      immutable.NewMap[schema.SectionID, slot[schema.Section]](intHasher[schema.SectionID]{}),
		reviews:       immutable.NewMap[schema.ReviewID, slot[schema.Review]](intHasher[schema.ReviewID]{}),
		reviewsByProd: immutable.NewMap[schema.ProductID, *immutable.SortedMap[orderKey, schema.ReviewID]](intHasher[schema.ProductID]{}),
		stats:         immutable.NewMap[schema.ProductID, slot[schema.ProductStats]](intHasher[schema.ProductID]{}),
		terms:         emptyTerms(),
		authors:       immutable.NewMap[schema.UserID, slot[schema.Author]](intHasher[schema.UserID]{}),
		markers:       immutable.NewMap[schema.PostID, slot[schema.PostMarker]](intHasher[schema.PostID]{}),
		media:         emptyMediaFiles(),
	}
}

// merchMaps are a builder's handles on the merchandising maps that grow with the catalog
// (reviews, statistics, terms, authors, markers, media files). Each empty one is filled in place
// through a builder, as the catalog's maps are on a fresh log: a bootstrap does not path-copy
// them once per entity.
type merchMaps struct {
	reviews pmap[schema.ReviewID, slot[schema.Review]]
	stats   pmap[schema.ProductID, slot[schema.ProductStats]]
	terms   pmap[schema.TermID, slot[schema.Term]]
	authors pmap[schema.UserID, slot[schema.Author]]
	markers pmap[schema.PostID, slot[schema.PostMarker]]
	media   pmap[string, schema.PostID]
}

// startMap sets p to mutate m: in place through a builder when m is empty (a new map nobody
// reads), by path copying otherwise.
func startMap[K, V any](p *pmap[K, V], m *immutable.Map[K, V], h immutable.Hasher[K]) {
	if m.Len() == 0 {
		p.b = immutable.NewMapBuilder[K, V](h)
		return
	}
	p.m = m
}

func (mm *merchMaps) init(m *merch) {
	startMap(&mm.reviews, m.reviews, intHasher[schema.ReviewID]{})
	startMap(&mm.stats, m.stats, intHasher[schema.ProductID]{})
	startMap(&mm.terms, m.terms, intHasher[schema.TermID]{})
	startMap(&mm.authors, m.authors, intHasher[schema.UserID]{})
	startMap(&mm.markers, m.markers, intHasher[schema.PostID]{})
	startMap(&mm.media, m.media, stringHasher{})
}

// done stores the maps in m; mm is spent.
func (mm *merchMaps) done(m *merch) {
	m.reviews, m.stats, m.terms = mm.reviews.done(), mm.stats.done(), mm.terms.done()
	m.authors, m.markers, m.media = mm.authors.done(), mm.markers.done(), mm.media.done()
}

// merchDirty records what a batch changed of the merchandising state.
type merchDirty struct {
	sales, sections bool
	reviews, stats  map[schema.ProductID]bool
}

func (d *merchDirty) any() bool {
	return d.sales || d.sections || len(d.reviews) > 0 || len(d.stats) > 0
}

func markProduct(m *map[schema.ProductID]bool, id schema.ProductID) {
	if *m == nil {
		*m = map[schema.ProductID]bool{}
	}
	(*m)[id] = true
}

// applyMerch applies a change of a merchandising kind; ok is false for any other kind.
func (b *builder) applyMerch(c *schema.Change) (ok bool, err error) {
	m := &b.merch
	switch c.Kind {
	case schema.KindFlashSale:
		id, err := parseID[schema.FlashSaleID](c)
		if err != nil {
			return true, err
		}
		v, err := decode[schema.FlashSale](c, b.intern)
		if err != nil {
			return true, err
		}
		s, _ := m.sales.Get(id)
		if _, applied := put(&s, c, v, b); applied {
			m.sales = m.sales.Set(id, s)
			b.dirty.merch.sales = true
		}
	case schema.KindSection:
		id, err := parseID[schema.SectionID](c)
		if err != nil {
			return true, err
		}
		v, err := decode[schema.Section](c, b.intern)
		if err != nil {
			return true, err
		}
		s, _ := m.sections.Get(id)
		if _, applied := put(&s, c, v, b); applied {
			m.sections = m.sections.Set(id, s)
			b.dirty.merch.sections = true
		}
	case schema.KindReview:
		id, err := parseID[schema.ReviewID](c)
		if err != nil {
			return true, err
		}
		v, err := decode[schema.Review](c, b.intern)
		if err != nil {
			return true, err
		}
		s, _ := b.mm.reviews.Get(id)
		old, applied := put(&s, c, v, b)
		if !applied {
			return true, nil
		}
		b.mm.reviews.Set(id, s)
		if old != nil {
			b.reviewIndex(old.ProductID, func(sm *immutable.SortedMap[orderKey, schema.ReviewID]) *immutable.SortedMap[orderKey, schema.ReviewID] {
				return sm.Delete(timeKey(old.CreatedAt, int64(old.ID)))
			})
		}
		if v != nil {
			b.reviewIndex(v.ProductID, func(sm *immutable.SortedMap[orderKey, schema.ReviewID]) *immutable.SortedMap[orderKey, schema.ReviewID] {
				return sm.Set(timeKey(v.CreatedAt, int64(v.ID)), v.ID)
			})
		}
	case schema.KindStats:
		id, err := parseID[schema.ProductID](c)
		if err != nil {
			return true, err
		}
		v, err := decode[schema.ProductStats](c, b.intern)
		if err != nil {
			return true, err
		}
		s, _ := b.mm.stats.Get(id)
		if _, applied := put(&s, c, v, b); applied {
			b.mm.stats.Set(id, s)
			markProduct(&b.dirty.merch.stats, id)
		}
	case schema.KindTerm:
		return true, b.applyTerm(c)
	case schema.KindAuthor:
		return true, b.applyAuthor(c)
	case schema.KindPostMarker:
		return true, b.applyMarker(c)
	default:
		return false, nil
	}
	return true, nil
}

func (b *builder) reviewIndex(p schema.ProductID, f func(*immutable.SortedMap[orderKey, schema.ReviewID]) *immutable.SortedMap[orderKey, schema.ReviewID]) {
	m := &b.merch
	sm, ok := m.reviewsByProd.Get(p)
	if !ok {
		sm = immutable.NewSortedMap[orderKey, schema.ReviewID](newestFirst{})
	}
	sm = f(sm)
	if sm.Len() == 0 {
		m.reviewsByProd = m.reviewsByProd.Delete(p)
	} else {
		m.reviewsByProd = m.reviewsByProd.Set(p, sm)
	}
	markProduct(&b.dirty.merch.reviews, p)
}

// finishMerch rebuilds the ready lists a batch made stale.
func (b *builder) finishMerch() {
	m := &b.merch
	if b.dirty.merch.sales {
		m.saleList = m.saleList[:0:0]
		for it := m.sales.Iterator(); !it.Done(); {
			_, s, _ := it.Next()
			if s.pub != nil {
				m.saleList = append(m.saleList, s.pub)
			}
		}
		slices.SortFunc(m.saleList, func(a, b *schema.FlashSale) int {
			return cmp.Or(a.StartsAt.Compare(b.StartsAt), cmp.Compare(a.ID, b.ID))
		})
	}
	if b.dirty.merch.sections {
		m.sectionList = m.sectionList[:0:0]
		for it := m.sections.Iterator(); !it.Done(); {
			_, s, _ := it.Next()
			if s.pub != nil {
				m.sectionList = append(m.sectionList, s.pub)
			}
		}
		slices.SortFunc(m.sectionList, func(a, b *schema.Section) int {
			return cmp.Or(cmp.Compare(a.Position, b.Position), cmp.Compare(a.ID, b.ID))
		})
	}
}

// FlashSales returns the store's flash sales by start. The slice is shared: do not modify it.
func (s *Snapshot) FlashSales() []*schema.FlashSale { return s.merch.saleList }

// Sections returns the store's active storefront sections by position. The slice is shared.
func (s *Snapshot) Sections() []*schema.Section { return s.merch.sectionList }

// Reviews returns a page of a product's approved reviews, newest first, and their count.
func (s *Snapshot) Reviews(p schema.ProductID, offset, limit int) ([]*schema.Review, int) {
	sm, ok := s.merch.reviewsByProd.Get(p)
	if !ok {
		return nil, 0
	}
	total := sm.Len()
	var out []*schema.Review
	i := 0
	for it := sm.Iterator(); !it.Done() && len(out) < limit; i++ {
		_, id, _ := it.Next()
		if i < offset {
			continue
		}
		if r, ok := s.merch.reviews.Get(id); ok && r.pub != nil {
			out = append(out, r.pub)
		}
	}
	return out, total
}

// Stats returns a product's social-proof statistics, or nil.
func (s *Snapshot) Stats(p schema.ProductID) *schema.ProductStats {
	st, _ := s.merch.stats.Get(p)
	return st.pub
}

// digestMerch adds the merchandising states to a digest.
func (s *Snapshot) digestMerch(add func(kind schema.Kind, id string, pub, priv any, pubOK, privOK bool)) {
	for it := s.merch.sales.Iterator(); !it.Done(); {
		id, sl, _ := it.Next()
		add(schema.KindFlashSale, schema.IDString(id), sl.pub, nil, sl.pub != nil, false)
	}
	for it := s.merch.sections.Iterator(); !it.Done(); {
		id, sl, _ := it.Next()
		add(schema.KindSection, schema.IDString(id), sl.pub, nil, sl.pub != nil, false)
	}
	for it := s.merch.reviews.Iterator(); !it.Done(); {
		id, sl, _ := it.Next()
		add(schema.KindReview, schema.IDString(id), sl.pub, nil, sl.pub != nil, false)
	}
	for it := s.merch.stats.Iterator(); !it.Done(); {
		id, sl, _ := it.Next()
		add(schema.KindStats, schema.IDString(id), sl.pub, nil, sl.pub != nil, false)
	}
	s.digestTerms(add)
	s.digestAuthors(add)
	for it := s.merch.markers.Iterator(); !it.Done(); {
		id, sl, _ := it.Next()
		add(schema.KindPostMarker, schema.IDString(id), sl.pub, nil, sl.pub != nil, false)
	}
}
