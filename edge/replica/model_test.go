package replica_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"vitrine/edge/replica"
	"vitrine/edge/search"
	"vitrine/schema"
)

// model is the expected catalog: what the writers have written, kept the simple way.
type model struct {
	products map[int64]*schema.Product
	variants map[int64]*schema.Variant // by variant id
	posts    map[int64]*schema.Post
	cats     map[int64]*schema.Category
	gen      int
}

func (m *model) publicProducts() []*schema.Product {
	var out []*schema.Product
	for _, p := range m.products {
		if p.Public() {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *schema.Product) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return out
}

// variantsOf returns a product's variants by id, so that histories replay deterministically.
func (m *model) variantsOf(pid int64) []*schema.Variant {
	var out []*schema.Variant
	for _, v := range m.variants {
		if int64(v.ProductID) == pid {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b *schema.Variant) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func (m *model) publicVariants(pid int64) []int64 {
	p := m.products[pid]
	if p == nil || !p.Public() {
		return []int64{}
	}
	vs := m.variantsOf(pid)
	slices.SortFunc(vs, func(a, b *schema.Variant) int {
		return cmp.Or(cmp.Compare(a.Position, b.Position), cmp.Compare(a.ID, b.ID))
	})
	return ids(vs)
}

func (m *model) publicPosts() []schema.PostID {
	var out []*schema.Post
	for _, p := range m.posts {
		if p.Public() {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *schema.Post) int { return cmp.Or(b.DateGMT.Compare(a.DateGMT), cmp.Compare(b.ID, a.ID)) })
	return postIDs(out)
}

// step writes one random operation into tx and the model.
func (m *model) step(rng *rand.Rand, tx *txn) {
	m.gen++
	switch op := rng.IntN(100); {
	case op < 35: // create or update a product
		id := int64(1 + rng.IntN(150))
		old := m.products[id]
		var p schema.Product
		if old == nil {
			p = *product(id, fmt.Sprintf("p%d-%d", id, m.gen), t0.Add(time.Duration(rng.IntN(40))*time.Minute))
		} else {
			p = *old
			p.Title = fmt.Sprintf("title %d", m.gen)
			if rng.IntN(2) == 0 {
				p.Prices = schema.Prices{"USD": int64(100 + rng.IntN(5000))}
			}
			if rng.IntN(3) == 0 {
				p.Slug = fmt.Sprintf("p%d-%d", id, m.gen)
			}
		}
		p.Featured = rng.IntN(3) == 0
		if rng.IntN(4) == 0 {
			p.Status = schema.ProductDraft
		} else {
			p.Status = schema.ProductActive
		}
		tx.putProduct(old, &p)
		if old != nil && old.Public() != p.Public() {
			for _, v := range m.variantsOf(id) {
				nv := *v
				tx.putVariant(old, &p, v, &nv)
				m.variants[int64(v.ID)] = &nv
			}
		}
		m.products[id] = &p
	case op < 45: // delete a product and its variants
		id := int64(1 + rng.IntN(150))
		p := m.products[id]
		if p == nil {
			return
		}
		for _, v := range m.variantsOf(id) {
			tx.putVariant(p, p, v, nil)
			delete(m.variants, int64(v.ID))
		}
		tx.putProduct(p, nil)
		delete(m.products, id)
	case op < 70: // create, update or delete a variant
		pid := int64(1 + rng.IntN(150))
		p := m.products[pid]
		if p == nil {
			return
		}
		vid := 10000 + pid*10 + int64(rng.IntN(4))
		old := m.variants[vid]
		if old != nil && rng.IntN(4) == 0 {
			tx.putVariant(p, p, old, nil)
			delete(m.variants, vid)
			return
		}
		v := variant(vid, pid, rng.IntN(4), []schema.Availability{schema.InStock, schema.LowStock, schema.OutOfStock}[rng.IntN(3)])
		var oldP *schema.Product
		if old != nil {
			oldP = p
		}
		tx.putVariant(oldP, p, old, v)
		m.variants[vid] = v
	case op < 90: // posts
		id := int64(1 + rng.IntN(80))
		old := m.posts[id]
		if old != nil && rng.IntN(5) == 0 {
			tx.putPost(old, nil)
			delete(m.posts, id)
			return
		}
		status := []schema.PostStatus{schema.StatusPublish, schema.StatusPublish, schema.StatusDraft, schema.StatusPending}[rng.IntN(4)]
		p := post(id, fmt.Sprintf("post-%d", id), fmt.Sprintf("Post %d", m.gen), status, t0.Add(time.Duration(rng.IntN(30))*time.Hour))
		if rng.IntN(5) == 0 {
			p.Password = "pw"
		}
		tx.putPost(old, p)
		m.posts[id] = p
	default: // categories
		id := int64(1 + rng.IntN(10))
		old := m.cats[id]
		if old != nil && rng.IntN(3) == 0 {
			tx.putCategory(true, nil, schema.CategoryID(id))
			delete(m.cats, id)
			return
		}
		c := category(id, fmt.Sprintf("c%d-%d", id, m.gen), 0)
		tx.putCategory(old != nil, c, schema.CategoryID(id))
		m.cats[id] = c
	}
}

func (m *model) check(t *testing.T, w *logWriter, sn *replica.Snapshot) {
	t.Helper()
	if got, want := sn.Digest(w.log, schema.Pub, schema.Priv), w.digest(schema.Pub, schema.Priv); got.Sum() != want.Sum() {
		t.Fatalf("version %d: digest differs from the writers':\n%s", sn.Version, strings.Join(got.Diff(want, 10), "\n"))
	}
	var size int64
	for _, st := range w.states {
		b, _ := json.Marshal(st.value)
		size += int64(len(b))
	}
	if sn.Bytes != size {
		t.Fatalf("version %d: Bytes = %d, want the encoded size of the live states %d", sn.Version, sn.Bytes, size)
	}
	want := m.publicProducts()
	got, total := sn.Products(0, 1000)
	if !slices.Equal(ids(got), ids(want)) || total != len(want) {
		t.Fatalf("version %d: Products = %v (total %d), want %v", sn.Version, ids(got), total, ids(want))
	}
	var featured []*schema.Product
	for _, p := range want {
		if p.Featured {
			featured = append(featured, p)
		}
	}
	if got := sn.Featured(1000); !slices.Equal(ids(got), ids(featured)) {
		t.Fatalf("version %d: Featured = %v, want %v", sn.Version, ids(got), ids(featured))
	}
	for id, p := range m.products {
		got := sn.ProductBySlug(p.Slug)
		if p.Public() != (got != nil) || got != nil && int64(got.ID) != id {
			t.Fatalf("version %d: ProductBySlug(%s) = %v, want product %d public=%v", sn.Version, p.Slug, got, id, p.Public())
		}
		if f := sn.Product(schema.ProductID(id), replica.Full); f == nil || f.Version != p.Version {
			t.Fatalf("version %d: Product(%d, Full) = %+v, want version %d", sn.Version, id, f, p.Version)
		}
		if got, want := ids(sn.Variants(schema.ProductID(id))), m.publicVariants(id); !slices.Equal(got, want) {
			t.Fatalf("version %d: Variants(%d) = %v, want %v", sn.Version, id, got, want)
		}
	}
	if got, _ := sn.Posts(replica.PostQuery{Limit: 1000}); !slices.Equal(postIDs(got), m.publicPosts()) {
		t.Fatalf("version %d: public posts = %v, want %v", sn.Version, postIDs(got), m.publicPosts())
	}
	if got := len(sn.Categories()); got != len(m.cats) {
		t.Fatalf("version %d: %d categories, want %d", sn.Version, got, len(m.cats))
	}
	// The search index holds the document of every public product, made from the product and
	// its public variants, and nothing else.
	ix, cur := sn.SearchIndex()
	if cur != "USD" || ix.Len() != len(want) {
		t.Fatalf("version %d: search index of %d documents in %q, want %d in USD", sn.Version, ix.Len(), cur, len(want))
	}
	for _, p := range want {
		d, ok := ix.Get(p.ID)
		wantDoc := search.DocOf(p, m.variantsOf(int64(p.ID)), "USD")
		if !ok || !reflect.DeepEqual(d, wantDoc) {
			t.Fatalf("version %d: indexed document of product %d = %+v, want %+v", sn.Version, p.ID, d, wantDoc)
		}
	}
}

// TestRandomHistoriesMatchModel runs random write histories through the replica, in batches of
// random size, and compares every query with a plain model of the writes.
func TestRandomHistoriesMatchModel(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5}
	if testing.Short() {
		seeds = seeds[:2]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			s := newSite(t, replica.Config{})
			s.r.Reset("e")
			feed(s.r, s.register(tenantEntry("shop", 0, schema.TenantActive)))
			w := s.log("shop")
			w.states = map[string]state{}
			m := &model{products: map[int64]*schema.Product{}, variants: map[int64]*schema.Variant{},
				posts: map[int64]*schema.Post{}, cats: map[int64]*schema.Category{}}

			// A large bootstrap batch (filled in place), then many small ones (path copying).
			var boot []*schema.Change
			for range 300 {
				tx := w.begin()
				m.step(rng, tx)
				boot = append(boot, body(tx.commit())...)
			}
			all := slices.Clone(boot) // the whole history, for a bootstrap of it at the end
			feed(s.r, append(boot, head("shop", w.version)))
			tn := s.r.TenantBySlug("shop")
			m.check(t, w, tn.Snapshot())

			for batch := 0; batch < 150; batch++ {
				var cs []*schema.Change
				for range 1 + rng.IntN(4) {
					tx := w.begin()
					for range 1 + rng.IntN(3) {
						m.step(rng, tx)
					}
					cs = append(cs, body(tx.commit())...)
				}
				all = append(all, cs...)
				if rng.IntN(5) == 0 {
					// A consumer between two messages of the batch is told nothing is pending:
					// the checkpoint there shows none of the batch.
					v, sn := tn.Version(), tn.Snapshot()
					cut := rng.IntN(len(cs) + 1)
					feed(s.r, cs[:cut])
					s.r.Checkpoint()
					if tn.Version() != v || tn.Snapshot() != sn {
						t.Fatalf("batch %d: a checkpoint after %d of its %d changes moved the tenant (version %d, was %d)", batch, cut, len(cs), tn.Version(), v)
					}
					feed(s.r, cs[cut:])
				} else {
					feed(s.r, cs)
				}
				feed(s.r, []*schema.Change{head("shop", w.version)})
				if tn.Version() != w.version {
					t.Fatalf("batch %d: Version() = %d, want %d", batch, tn.Version(), w.version)
				}
				if batch%3 == 0 || batch == 149 {
					m.check(t, w, tn.Snapshot())
				}
			}

			// The whole churned history in one batch: a fresh log filled in place, whose
			// variant lists and search documents are made once at the end.
			s2 := newSite(t, replica.Config{})
			s2.r.Reset("e")
			feed(s2.r, s.register(tenantEntry("shop", 0, schema.TenantActive)))
			feed(s2.r, append(slices.Clone(all), head("shop", w.version)))
			m.check(t, w, s2.r.TenantBySlug("shop").Snapshot())
		})
	}
}
