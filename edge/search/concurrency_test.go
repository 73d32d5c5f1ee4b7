package search_test

import (
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"vitrine/edge/search"
	"vitrine/edge/search/searchtest"
	"vitrine/schema"
)

// TestConcurrentReaders runs readers on an old index, and on whichever index is current, while a
// writer derives new ones with With: the old index must keep answering exactly as before, and
// the race detector must stay silent.
func TestConcurrentReaders(t *testing.T) {
	docs := searchtest.Catalog(2000, 5)
	base := search.Build(docs)
	qs := []search.Query{
		{Text: "lamp ", Limit: 10},
		{Text: "red lamp", Limit: 10, Sort: search.PriceAsc},
		{Text: "lapm ", Limit: 5, Offset: 3},
		{Categories: []schema.CategoryID{3, 4}, Limit: 10},
	}
	want := make([]search.Result, len(qs))
	for i, q := range qs {
		want[i] = base.Search(q)
	}
	wantSugg := base.Suggest("la", 8)

	var current atomic.Pointer[search.Index]
	current.Store(base)
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load() || n < 20; n++ {
				for i, q := range qs {
					if got := base.Search(q); !reflect.DeepEqual(got, want[i]) {
						errs <- "the old index answered differently"
						return
					}
					current.Load().Search(q)
				}
				if got := base.Suggest("la", 8); !reflect.DeepEqual(got, wantSugg) {
					errs <- "the old index suggested differently"
					return
				}
				current.Load().Suggest("red l", 8)
			}
		}()
	}
	others := searchtest.Catalog(300, 6)
	ix := base
	for i := 0; i < 300; i++ {
		d := *others[i]
		d.ID = docs[(i*37)%len(docs)].ID
		var dels []schema.ProductID
		if i%3 == 0 {
			dels = append(dels, docs[(i*53)%len(docs)].ID)
		}
		ix = ix.With([]*search.Doc{&d}, dels)
		current.Store(ix)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
